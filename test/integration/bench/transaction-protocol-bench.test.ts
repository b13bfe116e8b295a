import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { testKafka } from '../../helpers/kafka-fixture.ts';

/**
 * The short variant of `npm run bench:transaction-protocol`: both loops of both versions on the
 * test broker, a few transactions each. Timings are printed, never asserted; asserted is that every
 * run finished and that its request counts are the version's (no AddPartitionsToTxn or
 * AddOffsetsToTxn with version 2), so the bench keeps measuring what it says.
 */
const run = promisify(execFile);

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

test('bench:transaction-protocol, short run: both versions finish both loops, version 2 without AddPartitionsToTxn or AddOffsetsToTxn', async () => {
  const { stderr } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/transaction-protocol.ts',
      '--tiny',
      '20',
      '--copy-transactions',
      '3',
      '--reps',
      '1',
    ],
    { timeout: 300_000, env: { ...process.env, HAMSTRING_BENCH_BOOTSTRAP: bootstrap } },
  );
  process.stdout.write(stderr);
  for (const version of [1, 2]) {
    assert.match(stderr, new RegExp(`v${version} tiny: 20 transactions in \\d+ ms`));
    assert.match(stderr, new RegExp(`v${version} copy: \\d+ records/s, \\d+ transactions`));
  }
  const requests = [
    ...stderr.matchAll(/requests: Produce \d+, AddPartitionsToTxn (\d+), AddOffsetsToTxn (\d+)/g),
  ];
  assert.equal(requests.length, 4, 'request counts of the four runs');
  // Version 1 runs first at rep 0: tiny v1, copy v1, tiny v2, copy v2.
  const [tinyV1, copyV1, tinyV2, copyV2] = requests.map((m) => [Number(m[1]), Number(m[2])]);
  assert.ok(tinyV1![0]! >= 20 && copyV1![0]! >= 3 && copyV1![1]! >= 3, 'version 1 adds by request');
  assert.deepEqual(
    [tinyV2, copyV2],
    [
      [0, 0],
      [0, 0],
    ],
    'version 2 sends neither',
  );
});
