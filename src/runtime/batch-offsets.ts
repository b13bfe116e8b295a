import type { TopicPartition, TopicPartitionOffset } from '../kafka/records.ts';
import { tpKey } from '../kafka/records.ts';

/**
 * The offsets a batch commits: per partition, the highest consumed offset + 1 (Kafka's committed
 * offset is the next one to read). Throws if a partition's offsets are not increasing
 * (gaps are normal: transaction markers take offsets), which would mean the consumer repeated records; committing then could lose data.
 */
export function nextOffsets(
  records: readonly (TopicPartition & { offset: number })[],
): TopicPartitionOffset[] {
  const last = new Map<string, TopicPartitionOffset>();
  for (const r of records) {
    const key = tpKey(r);
    const prev = last.get(key);
    if (prev && r.offset <= prev.offset - 1) {
      throw new Error(`offsets out of order in ${key}: ${r.offset} after ${prev.offset - 1}`);
    }
    last.set(key, { topic: r.topic, partition: r.partition, offset: r.offset + 1 });
  }
  return [...last.values()];
}

export function partitionsOf(records: readonly TopicPartition[]): TopicPartition[] {
  const seen = new Map<string, TopicPartition>();
  for (const r of records) seen.set(tpKey(r), { topic: r.topic, partition: r.partition });
  return [...seen.values()];
}
