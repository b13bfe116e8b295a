import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker, type Stage, type WorkerHooks } from '../../../src/runtime/index.ts';
import { stuckNativeCalls } from '../../../src/kafka/abandoned-clients.ts';
import { createConsumer } from '../../../src/kafka/consumer.ts';
import { KafkaError } from '../../../src/kafka/kafka-error.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { uniqueTopic, uniqueGroup, uniqueTransactionalId } from '../../helpers/names.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  assertExactlyOnce,
  createTopics,
  passThroughStage,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
let cluster: LocalKafkaCluster;
let privateKafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: its faults would otherwise stall every file running beside it.
before(async () => {
  privateKafka = await startPrivateKafka('broker-faults');
  ({ bootstrap, cluster } = privateKafka);
});
after(async () => {
  await privateKafka?.stop();
});

const API_TIMEOUT = 5_000;

type Recovery = Parameters<NonNullable<WorkerHooks['onRecovery']>>[0];

async function reconnectAttempts(w: TransactionalWorker): Promise<number> {
  return (await w.metrics.reconnectAttempts.get()).values[0]?.value ?? 0;
}

/**
 * Holds the batch being processed when armed: `held` resolves once a batch is in hand, and the
 * batch goes on (to produce and commit) when `release` is called.
 */
class BatchGate {
  #armed = false;
  #entered: (() => void) | undefined;
  #release: (() => void) | undefined;

  wrap(stage: Stage): Stage {
    return {
      ...stage,
      process: async (records, ctx) => {
        if (this.#armed) {
          this.#armed = false;
          const released = new Promise<void>((r) => (this.#release = r));
          this.#entered?.();
          await released;
        }
        return stage.process(records, ctx);
      },
    };
  }

  /** Resolves once the next batch is held. */
  held(): Promise<void> {
    this.#armed = true;
    return new Promise<void>((r) => (this.#entered = r));
  }

  release(): void {
    this.#release?.();
  }
}

/** Runs the pass-through under load through `fault`; returns the worker and the recoveries it ran. */
async function withLoad(
  name: string,
  fault: (w: TransactionalWorker) => Promise<void>,
  wrap: (stage: Stage) => Stage = (stage) => stage,
) {
  const recoveries: Recovery[] = [];
  const input = uniqueTopic(`${name}-in`);
  const output = uniqueTopic(`${name}-out`);
  const group = uniqueGroup(name);
  await createTopics(bootstrap, [input, output], 3);
  await seed(bootstrap, input, 0, 3_000);
  const w = new TransactionalWorker({
    stage: wrap(passThroughStage(input, output, group)),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: API_TIMEOUT, messageTimeoutMs: 20_000 }),
    batch: { size: 20, timeoutMs: 20 },
    log: silentLogger(),
    hooks: { onRecovery: (info) => recoveries.push(info) },
  });
  await w.start();
  try {
    await waitFor(() => w.status().committedTransactions >= 5, {
      timeoutMs: 60_000,
      message: 'worker under load',
    });
    await fault(w);
    await seed(bootstrap, input, 3_000, 500);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 3_500, timeoutMs: 180_000 });
  } finally {
    await w.stop();
  }
  return { w, recoveries, reconnects: await reconnectAttempts(w) };
}

describe('broker faults under load (1-node cluster)', () => {
  after(async () => {
    for (const id of cluster.nodeIds()) if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  });

  test('the broker stopped (SIGSTOP) longer than the API timeout, then resumed: recovered by reconnecting or a new producer', async (t) => {
    // The broker stops while the worker holds a batch, which then goes on to produce and commit:
    // a worker waiting on its fetch instead makes no call that could time out, and would only find
    // its membership gone after the resume.
    const gate = new BatchGate();
    const { w, recoveries, reconnects } = await withLoad(
      'sigstop',
      async () => {
        const [id] = cluster.nodeIds();
        await gate.held();
        cluster.pauseNode(id!);
        gate.release();
        await new Promise((r) => setTimeout(r, API_TIMEOUT * 2.5));
        cluster.resumeNode(id!);
      },
      (stage) => gate.wrap(stage),
    );
    const seen = JSON.stringify(recoveries);
    t.diagnostic(`recoveries: ${seen}; reconnect attempts: ${reconnects}`);
    // Calls time out (retriable, deadline passed) or the clients see all brokers down (transport):
    // either way the plan rebuilds the clients, never a rewind that would wait on the same clients.
    const rebuilt = recoveries.filter(
      (r) =>
        (r.kind === 'transport' || r.kind === 'retriable') &&
        (r.action === 'reconnect' || r.action === 'recreate-producer'),
    );
    assert.ok(rebuilt.length >= 1, `a transport or timeout recovery rebuilt the clients: ${seen}`);
    if (recoveries.some((r) => r.action === 'reconnect'))
      assert.ok(reconnects >= 1, `a reconnect plan counts its attempts (${reconnects})`);
    assert.ok(!recoveries.some((r) => r.action === 'stop'), seen);
    // send_offsets_to_transaction, in flight during the pause, once waited for good (its pool
    // thread then held the process at exit); it now returns within its timeout like every call.
    assert.equal(stuckNativeCalls(), 0, 'no native call was left pending');
    assert.equal(w.status().failure, undefined);
    assert.ok(w.status().committedTransactions > 5);
  });

  test('send_offsets_to_transaction during a broker pause ends by its own timeout and leaves no native call pending', async () => {
    const input = uniqueTopic('pause-offsets-in');
    const group = uniqueGroup('pause-offsets');
    await createTopics(bootstrap, [input], 1);
    await seed(bootstrap, input, 0, 10);
    const log = silentLogger();
    const consumer = createConsumer(
      testConsumerSettings(bootstrap, 'pause-offsets', group),
      { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
      () => undefined,
      log,
    );
    const producer = createProducer(
      {
        bootstrapServers: bootstrap,
        clientId: 'pause-offsets',
        transactionalId: uniqueTransactionalId('pause-offsets'),
        transactionTimeoutMs: 60_000,
        messageTimeoutMs: 20_000,
        apiTimeoutMs: API_TIMEOUT,
      },
      log,
    );
    const [id] = cluster.nodeIds();
    try {
      await consumer.connect(20_000);
      consumer.subscribe([input]);
      await producer.connect(20_000);
      await producer.initTransactions();
      let consumed = 0;
      await waitFor(async () => (consumed += (await consumer.consume(10, 500)).length) >= 10, {
        timeoutMs: 30_000,
        message: 'the seeded records consumed',
      });
      await producer.beginTransaction();
      cluster.pauseNode(id!);
      let failure: unknown;
      let idle: boolean;
      try {
        failure = await producer.sendOffsets([{ topic: input, partition: 0, offset: 10 }], consumer).then(
          () => new Error('sendOffsets succeeded against a paused broker'),
          (e: unknown) => e,
        );
        idle = (await producer.whenIdle?.(0)) ?? false;
      } finally {
        cluster.resumeNode(id!);
      }
      // Unbounded, librdkafka's call outlived the pause (the JS guard then gave up on it "with no
      // answer" while it still held its pool thread, for good when the coordinator stayed away).
      assert.ok(failure instanceof KafkaError, String(failure));
      assert.equal(failure.codeName, '_TIMED_OUT', failure.message);
      assert.doesNotMatch(failure.message, /gave no answer/);
      assert.equal(idle, true, 'no native call is pending once the call has failed');
    } finally {
      await producer.close(10_000);
      await consumer.close(10_000);
    }
  });

  test('the broker killed -9 and restarted during load', async (t) => {
    let commitsAtRestart = 0;
    const { w, recoveries, reconnects } = await withLoad('brokerkill', async (worker) => {
      const [id] = cluster.nodeIds();
      await cluster.killNode(id!);
      await new Promise((r) => setTimeout(r, 3_000));
      await cluster.startNode(id!);
      commitsAtRestart = worker.status().committedTransactions;
    });
    const seen = JSON.stringify(recoveries);
    t.diagnostic(`recoveries: ${seen}; reconnect attempts: ${reconnects}`);
    // Whether librdkafka rides out a 3 s outage or the worker goes through its reconnect loop depends
    // on timing; what is planned must be a transport-path plan, and it must commit again by itself.
    for (const r of recoveries) {
      assert.notEqual(r.action, 'stop', seen);
      if (r.kind === 'transport') assert.equal(r.action, 'reconnect', seen);
    }
    if (recoveries.some((r) => r.action === 'reconnect'))
      assert.ok(reconnects >= 1, `a reconnect plan counts its attempts (${reconnects})`);
    assert.equal(w.status().failure, undefined);
    assert.ok(
      w.status().committedTransactions > commitsAtRestart,
      'the worker commits again after the restart',
    );
  });
});
