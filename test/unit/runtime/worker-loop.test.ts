import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { code } from '../../../src/kafka/error-codes.ts';
import { KafkaError } from '../../../src/kafka/kafka-error.ts';
import type { WorkerOptions } from '../../../src/runtime/index.ts';
import { captureLog } from '../../helpers/capture-log.ts';
import { FAKE_KAFKA_OPTIONS, copyStage, fakeWorker } from '../../support/fake-worker.ts';
import { raw, type FakeClock, type FakeProducer } from '../../support/worker-fakes.ts';

const IN = 'loop-in';

type Recovery = Parameters<NonNullable<NonNullable<WorkerOptions['hooks']>['onRecovery']>>[0];

function setUp(records = 3, extra: Partial<WorkerOptions> = {}) {
  const recoveries: Recovery[] = [];
  const setup = fakeWorker({ stage: 'loop.copy', input: IN, output: 'loop-out' }, records, {
    hooks: { onRecovery: (info) => recoveries.push(info) },
    ...extra,
  });
  return { ...setup, recoveries };
}

/** Every one of the `n` input records was committed, and its output committed exactly once, in order. */
function assertEachOnce(kafka: ReturnType<typeof setUp>['kafka'], n: number): void {
  assert.equal(kafka.topic.committed, n);
  assert.deepEqual(
    kafka.producers.flatMap((p) => p.committedOutputs).map((r) => String(r.value)),
    Array.from({ length: n }, (_, i) => `v${i}`),
  );
}

/** The producer's commits and aborts take 8 s, as an end retried after a coordinator failover does. */
function retriedEnds(producer: FakeProducer, clock: FakeClock): void {
  const commit = producer.commitTransaction.bind(producer);
  const abort = producer.abortTransaction.bind(producer);
  producer.commitTransaction = () => {
    clock.advance(8_000);
    return commit();
  };
  producer.abortTransaction = () => {
    clock.advance(8_000);
    return abort();
  };
}

function kafkaError(kind: 'authorization' | 'config', name: string): KafkaError {
  return new KafkaError(kind, code(name), 'connect', `${name} for this principal`, {
    fatal: false,
    retriable: false,
    txnRequiresAbort: false,
  });
}

describe('the worker loop, one step at a time on fake clients', () => {
  it('copies a batch and commits its offsets in one step', async () => {
    const { kafka, worker } = setUp(3);
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.producers[0]!.committedOutputs.length, 3);
    assert.equal(kafka.topic.committed, 3);
    assert.equal(worker.status().committedTransactions, 1);
    await worker.stop();
  });

  it('a commit that fails while the next batch is fetched is recovered before that batch is processed: no loss, no duplicate', async () => {
    const firsts: string[] = [];
    const copy = copyStage({ stage: 'loop.copy', input: IN, output: 'loop-out' });
    const { kafka, worker, recoveries } = setUp(20, {
      stage: {
        ...copy,
        process: (records, ctx) => {
          firsts.push(String(records[0]!.value));
          return copy.process(records, ctx);
        },
      },
    });
    kafka.nextProducerFaults.push({ commitTransaction: raw(code('_FAIL'), 'commit exploded') });
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(recoveries.length, 0, 'the commit runs on while the step returns');
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => r.action),
      ['rewind'],
    );
    assert.deepEqual(firsts, ['v0'], 'the batch fetched meanwhile was discarded, not processed');
    for (let i = 0; i < 3; i += 1) await worker.step();
    assert.deepEqual(firsts, ['v0', 'v0', 'v10']);
    assertEachOnce(kafka, 20);
    await worker.stop();
  });

  it('a consumer error of kind membership leads to a consumer reset at the next step', async () => {
    const { kafka, worker, recoveries } = setUp(0);
    await worker.start({ loop: false });
    await worker.step();
    const first = kafka.consumers[0]!;
    first.reportError(
      classifyKafkaError({ code: code('_MAX_POLL_EXCEEDED'), message: 'max poll' }, 'consume'),
    );
    await worker.step();
    assert.equal(first.closed, true, 'the member of the expired generation left');
    assert.equal(kafka.consumers.length, 2, 'a fresh consumer joined');
    assert.equal(kafka.producers.length, 1, 'the producer was kept');
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action, r.steps]),
      [['membership', 'reset-consumer', ['reset-consumer']]],
    );
    assert.ok(worker.status().alerts.includes('max_poll_exceeded_or_unknown_member'));
    await worker.stop();
  });

  it('a rewind never goes below the offsets this worker committed, whatever the group reports: no duplicate', async () => {
    const { kafka, worker, recoveries } = setUp(20);
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.topic.committed, 10);
    // The coordinator answers "no committed offset", which a seek reads as "from the beginning".
    kafka.consumers[0]!.reportedCommitted = -1001;
    kafka.producers[0]!.faults.sendOffsets = raw(code('CONCURRENT_TRANSACTIONS'), 'abortable', {
      isTxnRequiresAbort: true,
    });
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => r.action),
      ['rewind'],
    );
    assert.deepEqual(
      kafka.consumers[0]!.seeks,
      [{ topic: IN, partition: 0, offset: 10 }],
      'rewound to its own commit',
    );
    for (let i = 0; i < 2; i += 1) await worker.step();
    assertEachOnce(kafka, 20);
    await worker.stop();
  });

  it("records the consumer fetched below the worker's own commit are skipped and the partition sought back: no duplicate", async () => {
    const { log, lines } = captureLog({ level: 'warn' });
    const { kafka, worker, recoveries } = setUp(20, { log });
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.topic.committed, 10);
    // The client resets its position to the beginning by itself: no call of the worker moved it.
    kafka.consumers[0]!.resetPosition(0);
    await worker.step();
    assert.deepEqual(
      kafka.consumers[0]!.seeks,
      [{ topic: IN, partition: 0, offset: 10 }],
      'sought back to its own commit',
    );
    assert.equal(kafka.topic.committed, 10, 'the batch of committed records was not processed');
    const counted = await worker.metrics.registry
      .getSingleMetric('hamstring_worker_records_below_commit_total')
      ?.get();
    assert.equal(counted?.values[0]?.value, 10, 'the ten records dropped are counted');
    assert.ok(worker.status().alerts.includes('records_below_commit'), 'and the alert condition holds');
    assert.deepEqual(
      lines.filter((l) => l.event === 'below-commit').map((l) => l.partitions),
      [[{ partition: `${IN}:0`, fetched: 0, dropped: 10, floor: 10 }]],
      'and the log says where and how many',
    );
    for (let i = 0; i < 2; i += 1) await worker.step();
    assertEachOnce(kafka, 20);
    assert.deepEqual(recoveries, [], 'no recovery was needed');
    await worker.stop();
  });

  it('a batch that reaches past the commit keeps the records above it, without a seek', async () => {
    const { kafka, worker } = setUp(30);
    await worker.start({ loop: false });
    await worker.step();
    kafka.consumers[0]!.resetPosition(5);
    await worker.step();
    assert.deepEqual(kafka.consumers[0]!.seeks, [], 'nothing to seek: the batch went past the commit');
    assert.equal(kafka.topic.committed, 15, 'records 10-14 of the batch 5-14 processed and committed');
    for (let i = 0; i < 2; i += 1) await worker.step();
    assertEachOnce(kafka, 30);
    await worker.stop();
  });

  it('a failed abort leads to a new producer, then the batch is rewound and committed', async () => {
    const { kafka, worker, recoveries } = setUp(2);
    kafka.nextProducerFaults.push({
      sendOffsets: raw(code('CONCURRENT_TRANSACTIONS'), 'abortable', { isTxnRequiresAbort: true }),
      abortTransaction: raw(code('_STATE'), 'abort broke'),
    });
    await worker.start({ loop: false });
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => [r.situation ?? 'loop', r.action, r.steps]),
      [
        ['loop', 'rewind', ['rewind']],
        ['abort', 'recreate-producer', ['close-producer', 'start-producer']],
      ],
    );
    assert.equal(kafka.producers.length, 2);
    assert.equal(kafka.producers[0]!.closed, true);
    assert.deepEqual(
      kafka.consumers[0]!.seeks,
      [{ topic: IN, partition: 0, offset: 0 }],
      'rewound to committed',
    );
    await worker.step();
    assert.equal(kafka.producers[1]!.committedOutputs.length, 2, 'the new producer commits the batch');
    assert.equal(kafka.topic.committed, 2);
    await worker.stop();
  });

  it('under transaction version 2 a commit fenced once gets a new producer and the batch again; a second fence stops the zombie', async () => {
    // Version 2 is the default when the options name none.
    const { kafka, worker, recoveries, clock } = setUp(20);
    const fenced = () => raw(code('_FENCED'), 'fenced by a newer instance', { isFatal: true });
    kafka.nextProducerFaults.push({ commitTransaction: fenced() });
    await worker.start({ loop: false });
    retriedEnds(kafka.producers[0]!, clock);
    await worker.step();
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action, r.steps]),
      [['fenced', 'recreate-producer', ['close-producer', 'start-producer', 'reset-consumer']]],
    );
    assert.equal(kafka.producers.length, 2);
    assert.equal(kafka.producers[0]!.closed, true);
    assert.equal(kafka.consumers.length, 2, 'a fresh consumer resumes from the committed offsets');
    await worker.step();
    assert.equal(kafka.topic.committed, 10);
    assert.deepEqual(
      kafka.producers[1]!.committedOutputs.map((r) => String(r.value)),
      Array.from({ length: 10 }, (_, i) => `v${i}`),
    );
    kafka.producers[1]!.faults.commitTransaction = fenced();
    retriedEnds(kafka.producers[1]!, clock);
    await worker.step();
    await worker.step();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.match(s.failure ?? '', /zombie/);
    assert.equal(kafka.producers.length, 2, 'no third producer');
    assert.equal(kafka.topic.committed, 10);
    await worker.stop();
  });

  it('under transaction version 2 a fenced abort that took seconds gets a new producer once, and the batch is committed by it', async () => {
    const { kafka, worker, recoveries, clock } = setUp(10);
    kafka.nextProducerFaults.push({
      sendOffsets: raw(code('CONCURRENT_TRANSACTIONS'), 'abortable', { isTxnRequiresAbort: true }),
      abortTransaction: raw(code('_FENCED'), 'fenced by a newer instance', { isFatal: true }),
    });
    await worker.start({ loop: false });
    retriedEnds(kafka.producers[0]!, clock);
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => [r.situation ?? 'loop', r.kind, r.action, r.steps]),
      [
        ['loop', 'abortable', 'rewind', ['rewind']],
        ['abort', 'fenced', 'recreate-producer', ['close-producer', 'start-producer']],
      ],
    );
    assert.equal(worker.status().state, 'recovering');
    await worker.step();
    assert.equal(kafka.producers.length, 2);
    assert.equal(kafka.producers[1]!.committedOutputs.length, 10, 'the new producer commits the batch');
    assert.equal(kafka.topic.committed, 10);
    await worker.stop();
  });

  for (const [title, version, slow] of [
    ['under transaction version 1 a fenced commit stops the worker at once, however long it took', 1, true],
    [
      'under transaction version 2 a commit fenced at once (a zombie, not a retry) stops the worker',
      2,
      false,
    ],
  ] as const)
    it(title, async () => {
      const { kafka, worker, clock } = setUp(20, {
        kafka: { ...FAKE_KAFKA_OPTIONS, transactionVersion: version },
      });
      kafka.nextProducerFaults.push({
        commitTransaction: raw(code('_FENCED'), 'fenced by a newer instance', { isFatal: true }),
      });
      await worker.start({ loop: false });
      if (slow) retriedEnds(kafka.producers[0]!, clock);
      await worker.step();
      await worker.step();
      assert.match(worker.status().failure ?? '', /zombie/);
      assert.equal(kafka.producers.length, 1);
      await worker.stop();
    });

  it('a retriable consume failure is retried in place: no abort, no seek, no new client', async () => {
    const { kafka, worker, recoveries } = setUp(2);
    await worker.start({ loop: false });
    kafka.consumers[0]!.consumeFault = raw(code('_PARTIAL'), 'try again', { isRetriable: true });
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action, r.steps]),
      [['retriable', 'retry-in-place', []]],
    );
    assert.deepEqual(kafka.consumers[0]!.seeks, []);
    assert.equal(kafka.consumers.length, 1);
    assert.equal(kafka.producers.length, 1);
    await worker.step();
    assert.equal(kafka.topic.committed, 2);
    await worker.stop();
  });

  it('a retriable failure that outlasts the API timeout is no longer retried in place', async () => {
    const { kafka, clock, worker, recoveries } = setUp(0);
    await worker.start({ loop: false });
    const fault = () => raw(code('_PARTIAL'), 'try again', { isRetriable: true });
    kafka.consumers[0]!.consumeFault = fault();
    await worker.step();
    clock.advance(5_000);
    kafka.consumers[0]!.consumeFault = fault();
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => r.action),
      ['retry-in-place', 'reconnect'],
    );
    await worker.stop();
  });

  it('a configuration error at start stops the worker with the reason, not live', async () => {
    const { kafka, worker } = setUp(1);
    kafka.nextProducerFaults.push({ connect: raw(code('_INVALID_ARG'), 'linger.ms must be >= 0') });
    await worker.start();
    await worker.done();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(
      s.failure ?? '',
      /configuration error: _INVALID_ARG during connect: linger\.ms must be >= 0/,
    );
    assert.equal(kafka.producers.length, 1, 'no reconnect loop');
  });

  it('an authorization error at start stops the worker naming it', async () => {
    const { kafka, worker } = setUp(1);
    kafka.nextProducerFaults.push({
      connect: kafkaError('authorization', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'),
    });
    await worker.start();
    await worker.done();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(s.failure ?? '', /not authorized: TRANSACTIONAL_ID_AUTHORIZATION_FAILED/);
  });

  /**
   * The produce requests were refused (the ACL went after the partitions joined the transaction):
   * librdkafka fails the commit with _INCONSISTENT, and the delivery reports carry the cause, at
   * once or (`late`) only with the next flush, as the binding's poll can bring them after the commit
   * failed. The worker must stop naming the refusal, not recreate producers until the fatal limit.
   */
  const refusedDeliveries = async (o: { extra: Partial<WorkerOptions>; late: boolean; steps: number }) => {
    const { kafka, worker, recoveries } = setUp(2, o.extra);
    await worker.start({ loop: false });
    const producer = kafka.producers[0]!;
    const refusal = new KafkaError(
      'authorization',
      code('TOPIC_AUTHORIZATION_FAILED'),
      'delivery',
      'Broker: Topic authorization failed: producing to topic loop-out',
      { fatal: false, retriable: false, txnRequiresAbort: false },
      { topic: 'loop-out', partition: -1, index: 0, bytes: 1 },
    );
    if (o.late) producer.lateDeliveryErrors = [refusal];
    else producer.deliveryErrors = [refusal];
    producer.faults.commitTransaction = raw(
      code('_INCONSISTENT'),
      '2 message(s) failed delivery (see individual delivery reports)',
      { isTxnRequiresAbort: true },
    );
    for (let i = 0; i < o.steps; i += 1) await worker.step();
    await worker.done();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.match(s.failure ?? '', /not authorized: .*producing to topic loop-out/);
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action]),
      [['authorization', 'stop']],
    );
    assert.equal(kafka.producers.length, 1, 'no producer was recreated');
    assert.equal(kafka.topic.committed, 0);
  };

  // The commit runs behind the loop without waiting for the delivery reports: its failure surfaces
  // in the second step.
  it('a commit failed by refused deliveries stops naming the refusal, not after recreating producers', () =>
    refusedDeliveries({ extra: {}, late: false, steps: 2 }));

  // The span's commit runs while the next batch is fetched: its failure surfaces in the second step.
  it('with a commit interval, a commit failed by refused deliveries whose reports come late stops naming the refusal', () =>
    refusedDeliveries({ extra: { commitInterval: { maxMs: 60_000, maxRecords: 2 } }, late: true, steps: 2 }));

  it('a transport failure at start enters the reconnect loop and stays live', async () => {
    const { kafka, worker, recoveries } = setUp(1);
    kafka.nextProducerFaults.push({ connect: raw(code('_TRANSPORT'), 'connection refused') });
    await worker.start({ loop: false });
    assert.equal(worker.status().live, true);
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action]),
      [['transport', 'reconnect']],
    );
    assert.equal(kafka.producers.length, 2, 'the reconnect loop created a new producer');
    await worker.step();
    assert.equal(kafka.topic.committed, 1);
    await worker.stop();
  });

  it('an unclassified error is rewound until its limit, then stops naming the error', async () => {
    const { kafka, worker, recoveries } = setUp(1, { otherErrorLimit: { count: 2, windowMs: 60_000 } });
    const boom = () => raw(code('_FAIL'), 'commit exploded');
    kafka.nextProducerFaults.push({ commitTransaction: boom() });
    await worker.start({ loop: false });
    const producer = kafka.producers[0]!;
    // The first commit runs while the next step fetches; its failure is recovered from in that step.
    await worker.step();
    producer.faults.commitTransaction = boom();
    await worker.step();
    // After a commit behind failed, the replayed batch commits in the foreground, failing in its step.
    await worker.step();
    assert.deepEqual(
      recoveries.map((r) => r.action),
      ['rewind', 'rewind'],
    );
    assert.equal(worker.status().state, 'recovering');
    producer.faults.commitTransaction = boom();
    await worker.step();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(s.failure ?? '', /3 times .*commit exploded/);
    assert.equal(kafka.topic.committed, 0);
    await worker.stop();
  });
});
