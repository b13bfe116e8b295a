import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { allocatorEnv } from '../../../bin/allocator.js';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';

/**
 * The short variant of `npm run bench:pipeline` (its long run is a separate command): the same
 * script on the test broker with a few thousand lines, so a change that breaks the bench (or a
 * pipeline that no longer drains, or no longer alerts) fails here rather than on the next
 * measurement. Figures are printed, never asserted: only that both phases produced them.
 */
const run = promisify(execFile);

/** The test process's environment without the pool size, so bench/launch.js relaunches as hamstring does. */
function withoutPool(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { UV_THREADPOOL_SIZE: _pool, ...rest } = env;
  return rest;
}

let bootstrap: string;
let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: the bench deletes and recreates the pipeline's topics on the broker it is
// given, so on the run-wide one it could run beside no other pipeline file.
before(async () => {
  kafka = await startPrivateKafka('bench-pipeline');
  bootstrap = kafka.bootstrap;
});
after(async () => {
  await kafka?.stop();
});

test('bench:pipeline, short run: the machine speed, lines/s once all six stages drained the input, then alert delays', async () => {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/launch.js',
      'bench/pipeline.ts',
      '--lines',
      '3000',
      '--warmup',
      '0',
      '--rounds',
      '1',
      '--rate',
      '300',
      '--seconds',
      '12',
      '--infected',
      '8',
    ],
    {
      env: { ...withoutPool(process.env), HAMSTRING_BENCH_BOOTSTRAP: bootstrap },
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  process.stdout.write(stdout);
  assert.match(
    stdout,
    /libuv thread pool: 16\n/,
    'bench/launch.js relaunched the bench with the pool of hamstring',
  );
  const expected = allocatorEnv({}).LD_PRELOAD === undefined ? 'glibc malloc' : 'jemalloc';
  assert.match(
    stdout,
    new RegExp(`allocator: ${expected}\\n`),
    'the relaunched bench runs on the allocator hamstring gets',
  );
  const through = /throughput: (\d+) lines through six stages in ([\d.]+) s/.exec(stdout);
  assert.ok(through, `no throughput line in:\n${stdout}`);
  assert.ok(
    Number(through[1]) > 2_500,
    `only ${through[1]} lines were written (3,000 asked for, rounded up to whole seconds of traffic)`,
  );
  const speed = /machine: (\d+) collector lines per CPU-second/.exec(stdout);
  assert.ok(speed && Number(speed[1]) > 0, `no machine speed before the round in:\n${stdout}`);
  const rate = /lines\/s: (\d+)/.exec(stdout);
  assert.ok(rate && Number(rate[1]) > 0, `no lines/s figure in:\n${stdout}`);
  const latency = /latency: (\d+) alerts .*\n\s+line in to alert out ms: p50 (\d+)\s+p99 (\d+)/.exec(stdout);
  assert.ok(latency, `no latency figures in:\n${stdout}`);
  assert.ok(Number(latency[1]) > 0, 'the latency phase saw no alert');
  assert.ok(Number(latency[3]) >= Number(latency[2]), 'p99 below p50');
  const perDetector = [...stdout.matchAll(/\n\s+(\S+): (\d+) alerts, p50 \d+\s+p99 \d+ ms/g)];
  assert.equal(
    perDetector.reduce((sum, m) => sum + Number(m[2]), 0),
    Number(latency[1]),
    `the alerts per detector add up to all alerts:\n${stdout}`,
  );
  assert.match(stdout, /\n\s+slowest: \d+ ms \(\S+, \S+, \d+ warnings\)/);
});
