import Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { OFFSET_INVALID, type TopicPartitionOffset } from './records.ts';
import { connectionProperties } from './security.ts';

const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
  new Promise<T>((resolve, reject) =>
    fn((err, v) => (err ? reject(classifyKafkaError(err, 'admin')) : resolve(v))),
  );

/**
 * Committed offsets of a group for the given partitions (AdminPort.groupOffsets). Asked through a
 * consumer of the group that never joins it, not through the Admin API: the Admin API's
 * ListConsumerGroupOffsets dereferences a NULL consumer group in librdkafka when the coordinator
 * moved (NOT_COORDINATOR; librdkafka #5040, confluent-kafka-javascript #374), which crashed the
 * verifier right after a broker restart.
 */
export async function readGroupOffsets(
  o: { bootstrapServers: string; clientId: string; groupId: string; timeoutMs: number },
  parts: { topic: string; partition: number }[],
): Promise<TopicPartitionOffset[]> {
  const reader = new Kafka.KafkaConsumer(
    {
      ...connectionProperties(o.bootstrapServers, `${o.clientId}-offsets`),
      'group.id': o.groupId,
      'enable.auto.commit': false,
      // Otherwise OffsetFetch requires stable offsets (KIP-447) and waits out every open
      // transaction of the group; the Admin API's default answers with what is committed.
      'isolation.level': 'read_uncommitted',
    },
    {},
  );
  await call<unknown>((cb) => reader.connect({ timeout: o.timeoutMs }, cb));
  try {
    const tps = await call<Kafka.TopicPartitionOffset[]>((cb) => reader.committed(parts, o.timeoutMs, cb));
    // No committed offset comes back as undefined (or negative); the contract says OFFSET_INVALID.
    return tps.map(({ topic, partition, offset }) => ({
      topic,
      partition,
      offset: offset === undefined || offset < 0 ? OFFSET_INVALID : offset,
    }));
  } finally {
    await new Promise<void>((resolve) => reader.disconnect(() => resolve()));
  }
}
