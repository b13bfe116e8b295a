import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { before, describe, test } from 'node:test';
import { longOr } from '../../helpers/long-run.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** Cycles of the stop loop: 10 by default, 300 in `npm run test:long` (the crash was about 1 in 50). */
const CYCLES = Number(process.env.HAMSTRING_STOP_CYCLES ?? longOr(10, 300));

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stopMs: number;
  stderr: string;
}

/** One worker process: started, one transaction committed, SIGTERM, exit awaited. */
async function cycle(env: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '16', HAMSTRING_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let committed = false;
  createInterface({ input: child.stdout }).on('line', (l) => {
    if (l.startsWith('{"committed"')) committed = true;
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    await waitFor(() => committed || child.exitCode !== null, { timeoutMs: 60_000, message: 'a commit' });
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  const t0 = Date.now();
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const { code, signal } = await exit;
  clearTimeout(killer);
  return { code, signal, stopMs: Date.now() - t0, stderr };
}

describe('stopping a worker process with SIGTERM, again and again', () => {
  test(`${CYCLES} start/commit/SIGTERM cycles each exit with code 0, no native abort, within seconds`, async () => {
    const [input, output, group] = [uniqueTopic('stop-in'), uniqueTopic('stop-out'), uniqueGroup('stop')];
    await createTopics(bootstrap, [input, output], 2);
    const bad: string[] = [];
    let slowest = 0;
    for (let i = 0; i < CYCLES; i += 1) {
      await seed(bootstrap, input, i * 10, 10);
      const o = await cycle({
        BOOTSTRAP: bootstrap,
        INPUT: input,
        OUTPUT: output,
        GROUP: group,
        BATCH_SIZE: '5',
      });
      slowest = Math.max(slowest, o.stopMs);
      const aborted = /pure virtual method called|terminate called|Segmentation fault|Aborted/.test(o.stderr);
      if (o.code !== 0 || o.signal !== null || aborted || o.stopMs > 10_000)
        bad.push(
          `cycle ${i}: code ${o.code} signal ${o.signal} after ${o.stopMs} ms\n${o.stderr.slice(-1500)}`,
        );
      if ((i + 1) % 50 === 0) process.stderr.write(`# ${i + 1} cycles, ${bad.length} bad\n`);
    }
    process.stderr.write(`# ${CYCLES} cycles, ${bad.length} bad, slowest stop ${slowest} ms\n`);
    assert.deepEqual(bad, []);
  });
});
