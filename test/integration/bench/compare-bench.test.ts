import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { testKafka } from '../../helpers/kafka-fixture.ts';

/**
 * The short variant of `npm run bench:compare` (its full run is a separate command): the same
 * script on the test broker with a few thousand records and the three exactly-once peers the
 * fair comparison is about, so a change that breaks the bench (the Java build, the Java seeder,
 * the Streams peer's commit every 500 records, the window) fails here rather than on the next
 * measurement. Throughput is printed, never asserted; what is asserted is what makes the
 * comparison fair and the output correct.
 */
const run = promisify(execFile);

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

interface Result {
  peer: string;
  ok: boolean;
  windowRecords: number;
  recordsPerSec: number;
  firstToLastPerSec: number;
  loadAverage: number[];
  recordsPerTxn?: number;
  check: { duplicates: number; missing: number; records: number };
}

test('bench:compare, short run: every exactly-once peer copies the Java-seeded input once, measured over 10-90 % of its output, Streams at about 500 records a transaction', async () => {
  const records = 6_000;
  const { stdout, stderr } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/compare.ts',
      '--records',
      String(records),
      '--sizes',
      '200',
      '--reps',
      '1',
      '--peers',
      'runtime-eos,java-loop,streams-eq',
      '--bootstrap',
      bootstrap,
      '--label',
      'short run of the test suite',
    ],
    // Below the runner's 600 s per file, so a bench that hangs fails with its own output.
    { timeout: 540_000, maxBuffer: 16 * 1024 * 1024 },
  ).catch((e: unknown) => {
    const { stderr = '', stdout = '' } = e as { stderr?: string; stdout?: string };
    throw new Error(`bench:compare failed: ${(e as Error).message}\n${stdout}\n${stderr.slice(-8000)}`);
  });
  process.stdout.write(stdout);
  assert.match(stderr, /\(java producer\)/, 'the input is written by the Java seeder');
  const written = /wrote (var\/bench\/compare-\S+)\.json/.exec(stderr);
  assert.ok(written, `no report written:\n${stderr}`);
  const report = JSON.parse(readFileSync(`${written[1]}.json`, 'utf8')) as {
    seeder: string;
    window: { from: number; to: number };
    results: Result[];
  };
  rmSync(`${written[1]}.json`);
  rmSync(`${written[1]}.md`);
  assert.equal(report.seeder, 'java');
  assert.deepEqual(report.window, { from: 0.1, to: 0.9 });
  assert.deepEqual(report.results.map((r) => r.peer).sort(), ['java-loop', 'runtime-eos', 'streams-eq']);
  for (const r of report.results) {
    assert.ok(r.ok, `${r.peer}: ${JSON.stringify(r.check)}`);
    assert.equal(r.check.duplicates, 0, `${r.peer}: exactly once`);
    assert.equal(r.check.missing, 0, `${r.peer}: nothing lost`);
    // 10 % to 90 % of the output: about 80 % of the records, give or take what one observer sample
    // or one transaction moves each end (a loaded host's Streams loop: up to ~1,000 records).
    assert.ok(
      r.windowRecords >= 0.8 * records - 1_500 && r.windowRecords <= 0.8 * records + 1_500,
      `${r.peer}: ${r.windowRecords} records in the window`,
    );
    assert.ok(Number.isFinite(r.recordsPerSec) && Number.isFinite(r.firstToLastPerSec), r.peer);
    assert.equal(r.loadAverage.length, 2, `${r.peer}: the load at its start and end`);
  }
  const txn = (peer: string) => report.results.find((r) => r.peer === peer)?.recordsPerTxn ?? NaN;
  // One batch of at most 500 a transaction; on a loaded host a consume may end on its 50 ms timer
  // with part of a batch (one such in the run gives 6,000 / 13 = 462).
  assert.ok(
    txn('runtime-eos') >= 300 && txn('runtime-eos') <= 500,
    `runtime-eos: ${txn('runtime-eos')} a transaction`,
  );
  // Requested every 500 records; Streams commits once the records of its current loop are done,
  // and a loaded host's loops are longer. Without the request it would be one 9 s interval's worth.
  assert.ok(
    txn('streams-eq') >= 400 && txn('streams-eq') <= 1_200,
    `streams-eq: ${txn('streams-eq')} a transaction`,
  );
  assert.match(stdout, /records\/s 10→90 %.*records\/s first→last output.*load \(1 min\)/);
});
