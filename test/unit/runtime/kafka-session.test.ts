import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConsumerPort, RebalanceListener } from '../../../src/kafka/consumer.ts';
import type { ProducerPort } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { AssignmentEpochs } from '../../../src/runtime/assignment-epochs.ts';
import { systemClock } from '../../../src/runtime/clock.ts';
import { KafkaSession } from '../../../src/runtime/kafka-session.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';

const p0 = { topic: 'in', partition: 0 };
const p1 = { topic: 'in', partition: 1 };

/** Consumers whose rebalance listeners the test fires by hand, as librdkafka would from a poll. */
function sessionWithListeners() {
  const listeners: RebalanceListener[] = [];
  const epochs = new AssignmentEpochs();
  const lostOrRevoked: string[] = [];
  const session = new KafkaSession({
    kafka: {
      bootstrapServers: 'unused:9092',
      groupProtocol: 'classic',
      assignmentStrategy: 'cooperative-sticky',
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1_000,
      maxPollIntervalMs: 300_000,
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 30_000,
      apiTimeoutMs: 1_000,
      commitRetryTimeoutMs: 1_000,
    },
    groupId: 'g',
    transactionalId: undefined,
    clientId: 'c',
    topics: ['in'],
    epochs,
    clients: {
      consumer: (_settings, listener) => {
        listeners.push(listener);
        return {
          connect: () => Promise.resolve(),
          subscribe: () => undefined,
          close: () => Promise.resolve(),
        } as unknown as ConsumerPort;
      },
      producer: () => ({}) as ProducerPort,
    },
    clock: systemClock,
    log: silentLogger(),
    metrics: new WorkerMetrics({ stage: 's', instance: 'i' }),
    reconnectBackOff: () => 10,
    onConsumerError: () => undefined,
    onRevokeOrLost: (cause) => lostOrRevoked.push(cause),
    onReconnectAttempt: () => undefined,
    isStopping: () => false,
  });
  return { session, listeners, epochs, lostOrRevoked };
}

describe('KafkaSession: rebalance callbacks', () => {
  it("applies the current consumer's assign, revoke and lost", async () => {
    const { session, listeners, epochs, lostOrRevoked } = sessionWithListeners();
    await session.startConsumer();
    listeners[0]!.onAssign([p0, p1]);
    assert.deepEqual(epochs.assigned(), [p0, p1]);
    listeners[0]!.onRevoke([p1]);
    listeners[0]!.onLost([p0]);
    assert.deepEqual(epochs.assigned(), []);
    assert.deepEqual(lostOrRevoked, ['revoke', 'lost']);
  });

  it('ignores a replaced consumer: its late lost (a close that timed out) does not take the new member’s partitions', async () => {
    const { session, listeners, epochs, lostOrRevoked } = sessionWithListeners();
    await session.startConsumer();
    listeners[0]!.onAssign([p0, p1]);
    await session.resetConsumer();
    listeners[1]!.onAssign([p0, p1]);
    const epoch = epochs.current;

    listeners[0]!.onLost([p0, p1]);
    listeners[0]!.onRevoke([p0]);
    listeners[0]!.onAssign([p1]);
    assert.deepEqual(epochs.assigned(), [p0, p1]);
    assert.equal(epochs.current, epoch, 'no epoch change from the old member');
    assert.deepEqual(lostOrRevoked, []);
  });

  it('ignores a closed consumer', async () => {
    const { session, listeners, epochs } = sessionWithListeners();
    await session.startConsumer();
    await session.closeConsumer();
    listeners[0]!.onAssign([p0]);
    assert.deepEqual(epochs.assigned(), []);
  });
});
