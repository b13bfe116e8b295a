import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { blockEventLoop } from '../../support/block-event-loop.ts';
import { exited, spawnWorker as spawnChild } from '../../support/spawn-worker.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import { InMemoryAttemptStore } from '../../../src/runtime/delivery-attempts/in-memory-attempt-store.ts';
import type { Stage } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  checkExactlyOnce,
  createTopics,
  readCommitted,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

const seq = (v: Buffer | null) => Number(v?.toString());

describe('bounded redelivery and dead letters under crashes (real broker)', () => {
  test('a crash between the dead-letter produce and the commit still leaves exactly one dead letter', async () => {
    const input = uniqueTopic('dltcrash-in');
    const output = uniqueTopic('dltcrash-out');
    const group = uniqueGroup('dltcrash');
    await createTopics(bootstrap, [input, output, `${input}.DLT`], 3);
    await seed(bootstrap, input, 0, 600);
    const env = {
      BOOTSTRAP: bootstrap,
      INPUT: input,
      OUTPUT: output,
      GROUP: group,
      INSTANCE: '0',
      FAIL_SEQ: '77',
    };
    const spawnWorker = (extra: Record<string, string>) => spawnChild({ ...env, ...extra }, children);
    const first = spawnWorker({ CRASH_BEFORE_COMMIT_WITH_DEAD_LETTER: '1' });
    await waitFor(() => first.lines.includes('CRASHING'), {
      timeoutMs: 60_000,
      message: 'worker dies with a dead letter in its open transaction',
    });
    await exited(first.child);
    const second = spawnWorker({});
    const out = await readCommitted(bootstrap, output, 599, 120_000);
    const report = checkExactlyOnce(out, 600);
    assert.equal(report.duplicates, 0);
    assert.equal(report.lost, 1, 'only record 77 is missing from the output');
    const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 10_000);
    assert.equal(dlt.length, 1, 'exactly one dead letter');
    assert.equal(seq(dlt[0]!.value), 77);
    second.child.kill('SIGTERM');
  });

  test('a record that crashes the worker process every time is dead-lettered after N deliveries; the rest flows', async () => {
    const input = uniqueTopic('crashpoison-in');
    const output = uniqueTopic('crashpoison-out');
    const group = uniqueGroup('crashpoison');
    const attempts = uniqueTopic('attempts');
    await createTopics(bootstrap, [input, output, `${input}.DLT`], 2);
    await createTopics(bootstrap, [attempts], 1);
    await seed(bootstrap, input, 0, 300);
    const env = {
      ATTEMPTS_TOPIC: attempts,
      BOOTSTRAP: bootstrap,
      INPUT: input,
      OUTPUT: output,
      GROUP: group,
      INSTANCE: '0',
      CRASH_SEQ: '150',
      ATTEMPT_STORE: 'kafka',
      MAX_DELIVERIES: '2',
      HAMSTRING_LOG_LEVEL: 'error',
    };
    // A supervisor, as systemd or Kubernetes would be: restart the worker whenever it dies.
    let restarts = 0;
    let stopped = false;
    let current: ChildProcess | undefined;
    const supervise = async () => {
      while (!stopped && restarts < 15) {
        current = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        children.push(current);
        await new Promise((r) => current!.once('exit', r));
        if (!stopped) restarts += 1;
      }
    };
    const supervisor = supervise();
    try {
      const out = await readCommitted(bootstrap, output, 299, 240_000);
      const report = checkExactlyOnce(out, 300);
      assert.equal(report.duplicates, 0);
      assert.equal(report.lost, 1);
      assert.ok(!out.some((r) => seq(r.value) === 150));
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 10_000);
      assert.equal(seq(dlt[0]!.value), 150);
      assert.equal(dlt[0]!.headers[DLT_HEADERS.errorKind]?.toString(), 'redelivery-exhausted');
      assert.ok(restarts >= 2 && restarts <= 6, `the crash repeated a bounded number of times (${restarts})`);
      // Every delivery of record 150 killed a worker: the dead letter counts them all, across processes.
      assert.equal(dlt[0]!.headers[DLT_HEADERS.attempts]?.toString(), String(restarts));
    } finally {
      stopped = true;
      current?.kill('SIGKILL');
      await supervisor;
    }
  });

  test('a record that blocks the event loop past max.poll.interval every time is dead-lettered after N deliveries', async () => {
    const input = uniqueTopic('stallpoison-in');
    const output = uniqueTopic('stallpoison-out');
    const group = uniqueGroup('stallpoison');
    await createTopics(bootstrap, [input, output, `${input}.DLT`], 1);
    await seed(bootstrap, input, 0, 120);
    let stalls = 0;
    const stage: Stage = {
      name: group,
      inputTopics: [input],
      outputTopics: [output],
      process(records) {
        if (records.some((r) => seq(r.value) === 30)) {
          stalls += 1;
          // Never yields: the member is expelled after max.poll.interval.
          blockEventLoop(8_500);
        }
        return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })) };
      },
    };
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { maxPollIntervalMs: 6_000, sessionTimeoutMs: 6_000 }),
      batch: { size: 20, timeoutMs: 50 },
      log: silentLogger(),
      recordErrors: { maxDeliveries: 2 },
      attemptStore: new InMemoryAttemptStore(),
    });
    await w.start();
    try {
      const out = await readCommitted(bootstrap, output, 119, 240_000);
      const report = checkExactlyOnce(out, 120);
      assert.equal(report.duplicates, 0);
      assert.equal(report.lost, 1);
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 10_000);
      assert.equal(seq(dlt[0]!.value), 30);
      assert.equal(dlt[0]!.headers[DLT_HEADERS.errorKind]?.toString(), 'redelivery-exhausted');
      assert.ok(stalls <= 5, `bounded: ${stalls} stalls`);
      assert.equal(
        dlt[0]!.headers[DLT_HEADERS.attempts]?.toString(),
        String(stalls),
        'every delivery counted',
      );
    } finally {
      await w.stop();
    }
  });
});
