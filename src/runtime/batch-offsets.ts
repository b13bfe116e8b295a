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
  const last = new Map<string, { topic: string; partition: number; offset: number }>();
  let run: { topic: string; partition: number; offset: number } | undefined;
  for (const r of records) {
    // Records come in runs of one partition: the map is consulted once per run.
    if (run === undefined || r.partition !== run.partition || r.topic !== run.topic) {
      run = last.get(tpKey(r));
      if (run === undefined) {
        run = { topic: r.topic, partition: r.partition, offset: r.offset + 1 };
        last.set(tpKey(r), run);
        continue;
      }
    }
    if (r.offset <= run.offset - 1) {
      throw new Error(`offsets out of order in ${tpKey(r)}: ${r.offset} after ${run.offset - 1}`);
    }
    run.offset = r.offset + 1;
  }
  return [...last.values()];
}

export function partitionsOf(records: readonly TopicPartition[]): TopicPartition[] {
  const seen = new Map<string, TopicPartition>();
  let last: TopicPartition | undefined;
  for (const r of records) {
    // A batch holds runs of one partition's records: a key per run, not per record.
    if (last !== undefined && r.partition === last.partition && r.topic === last.topic) continue;
    last = r;
    const key = tpKey(r);
    if (!seen.has(key)) seen.set(key, { topic: r.topic, partition: r.partition });
  }
  return [...seen.values()];
}
