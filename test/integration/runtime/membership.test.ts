import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { ThreadPool } from '../../../src/runtime/thread-pool.ts';
import type { Stage } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { assertExactlyOnce, createTopics, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';
import { blockEventLoop } from '../../support/block-event-loop.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const MAX_POLL = 8_000;

/** A pass-through stage whose first batch runs `slow` before returning. */
function slowFirstBatch(
  input: string,
  output: string,
  group: string,
  slow: (signal: AbortSignal) => Promise<void> | void,
): Stage & { batches: number } {
  const stage = {
    name: group,
    inputTopics: [input],
    outputTopics: [output],
    batches: 0,
    async process(records: Parameters<Stage['process']>[0], ctx: Parameters<Stage['process']>[1]) {
      stage.batches += 1;
      if (stage.batches === 1) await slow(ctx.signal);
      return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })) };
    },
  };
  return stage;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

describe('membership under long work', () => {
  const running: TransactionalWorker[] = [];
  after(async () => {
    await Promise.all(running.map((w) => w.stop()));
  });

  test('a batch that awaits past max.poll.interval keeps the membership (partitions paused, events served)', async () => {
    const input = uniqueTopic('stall-in');
    const output = uniqueTopic('stall-out');
    const group = uniqueGroup('stall');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 500);
    const stage = slowFirstBatch(input, output, group, (signal) => sleep(MAX_POLL * 1.75, signal));
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { maxPollIntervalMs: MAX_POLL, sessionTimeoutMs: 6_000 }),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
    });
    running.push(w);
    await w.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 500 });
    const maxPoll = await w.metrics.maxPollExceeded.get();
    const stale = await w.metrics.staleBatches.get();
    assert.equal(maxPoll.values[0]?.value ?? 0, 0, 'no _MAX_POLL_EXCEEDED');
    assert.equal(stale.values[0]?.value ?? 0, 0, 'the slow batch was not discarded');
    const epochs = await w.metrics.epochChanges.get();
    const assigns = epochs.values.find((v) => v.labels.cause === 'assign')?.value ?? 0;
    assert.equal(assigns, 1, 'one assignment, never rebalanced');
  });

  test('CPU-bound work in a ThreadPool for twice max.poll.interval never costs the membership', async () => {
    const input = uniqueTopic('cpu-in');
    const output = uniqueTopic('cpu-out');
    const group = uniqueGroup('cpu');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 300);
    const pool = new ThreadPool({ module: new URL('../../support/cpu-task.ts', import.meta.url), size: 1 });
    const stage = slowFirstBatch(input, output, group, async (signal) => {
      await pool.run<number, number>(MAX_POLL * 2, signal);
    });
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { maxPollIntervalMs: MAX_POLL, sessionTimeoutMs: 6_000 }),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
    });
    running.push(w);
    await w.start();
    try {
      await assertExactlyOnce(bootstrap, { input, output, group, expected: 300 });
      const epochs = await w.metrics.epochChanges.get();
      assert.equal(epochs.values.find((v) => v.labels.cause === 'assign')?.value, 1, 'never rebalanced');
      assert.equal((await w.metrics.maxPollExceeded.get()).values[0]?.value ?? 0, 0);
      assert.equal((await w.metrics.staleBatches.get()).values[0]?.value ?? 0, 0);
    } finally {
      await pool.close();
    }
  });

  test('a batch that blocks the event loop past max.poll.interval recovers through the membership path', async () => {
    const input = uniqueTopic('block-in');
    const output = uniqueTopic('block-out');
    const group = uniqueGroup('block');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 500);
    const stage = slowFirstBatch(input, output, group, () => {
      // Synchronous work that never yields: the one case the keep-alive pause cannot cover.
      blockEventLoop(MAX_POLL + 4_000);
    });
    const recoveries: { kind: string; code: string; action: string; steps?: readonly string[] }[] = [];
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { maxPollIntervalMs: MAX_POLL, sessionTimeoutMs: 6_000 }),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
      hooks: { onRecovery: (info) => recoveries.push(info) },
    });
    running.push(w);
    await w.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 500 });
    const seen = JSON.stringify(recoveries);
    const membership = recoveries.filter((r) => r.kind === 'membership');
    assert.ok(membership.length >= 1, `a membership error was recovered from: ${seen}`);
    for (const r of membership) {
      assert.equal(r.action, 'reset-consumer', seen);
      assert.deepEqual(r.steps, ['reset-consumer'], seen);
    }
    assert.ok(
      w.status().alerts.includes('max_poll_exceeded_or_unknown_member'),
      `the membership alert is raised: ${w.status().alerts.join(',')}`,
    );
  });

  test('a second member joining while a batch is in flight makes that batch stale; nothing is lost or doubled', async () => {
    const input = uniqueTopic('join-in');
    const output = uniqueTopic('join-out');
    const group = uniqueGroup('join');
    await createTopics(bootstrap, [input, output], 4);
    await seed(bootstrap, input, 0, 1_000);
    let inFlight = false;
    let abortedBySignal = false;
    const stage = slowFirstBatch(input, output, group, async (signal) => {
      inFlight = true;
      await sleep(60_000, signal);
      abortedBySignal = signal.aborted;
    });
    const opts = { maxPollIntervalMs: 30_000, sessionTimeoutMs: 6_000 };
    const a = new TransactionalWorker({
      stage,
      instanceId: 'a',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, opts),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
    });
    running.push(a);
    await a.start();
    await waitFor(() => inFlight, { timeoutMs: 30_000, message: 'first batch in flight' });
    const b = new TransactionalWorker({
      stage: slowFirstBatch(input, output, group, () => undefined),
      instanceId: 'b',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, opts),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
    });
    running.push(b);
    await b.start();
    await waitFor(() => abortedBySignal, {
      timeoutMs: 30_000,
      message: 'the in-flight batch is aborted by the rebalance',
    });
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_000 });
    const stale = await a.metrics.staleBatches.get();
    assert.ok((stale.values[0]?.value ?? 0) >= 1, 'stale batch discarded');
  });
});
