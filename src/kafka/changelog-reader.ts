import Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { toRecord } from './consumer.ts';
import { tpKey, type FetchedRecord, type TopicPartition } from './records.ts';
import { connectionProperties } from './security.ts';

/** A partition to read from `from` (inclusive) until the position reaches `until`. */
export interface ChangelogRange extends TopicPartition {
  from: number;
  until: number;
}

/**
 * Reads changelog partitions with read_committed, assigned by hand (no group membership, no
 * commits): what restoring a state store needs. Aborted records are never returned; a partition is
 * done once the consumer's position passed `until`, which with read_committed also means that no
 * open transaction below it can still add records there.
 */
export interface ChangelogReader {
  /** Low and high watermark of each partition, asked of the partition leader. */
  watermarks(partitions: TopicPartition[]): Promise<(TopicPartition & { low: number; high: number })[]>;
  /**
   * Reads every range to its end, handing records over in fetch-sized chunks, and returns the
   * position reached per partition (by `tpKey`). Rejects when `signal` fires.
   */
  read(
    ranges: ChangelogRange[],
    onRecords: (records: FetchedRecord[]) => void,
    signal?: AbortSignal,
  ): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export async function openChangelogReader(o: {
  bootstrapServers: string;
  clientId: string;
  timeoutMs: number;
}): Promise<ChangelogReader> {
  const native = new Kafka.KafkaConsumer(
    {
      ...connectionProperties(o.bootstrapServers, o.clientId),
      // Required by the client, never joined: the reader only assigns.
      'group.id': `${o.clientId}-restore`,
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': 'read_committed',
      'enable.partition.eof': true,
      'auto.offset.reset': 'earliest',
      'allow.auto.create.topics': false,
      'fetch.max.bytes': 52_428_800,
      'max.partition.fetch.bytes': 10_485_760,
    },
    {},
  );
  const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
    new Promise<T>((resolve, reject) =>
      fn((err, v) => (err ? reject(classifyKafkaError(err, 'consume')) : resolve(v))),
    );
  await call<unknown>((cb) => native.connect({ timeout: o.timeoutMs }, cb));
  // Otherwise a batch waits out the whole timeout to fill up, at every call (see consumer.ts).
  (
    native as unknown as { setDefaultIsTimeoutOnlyForFirstMessage(only: boolean): void }
  ).setDefaultIsTimeoutOnlyForFirstMessage(true);
  const eof = new Map<string, number>();
  native.on('partition.eof', (e: { topic: string; partition: number; offset: number }) => {
    eof.set(tpKey(e), e.offset);
  });

  return {
    async watermarks(partitions) {
      const out: (TopicPartition & { low: number; high: number })[] = [];
      for (const tp of partitions) {
        const w = await call<Kafka.WatermarkOffsets>((cb) => {
          native.queryWatermarkOffsets(tp.topic, tp.partition, o.timeoutMs, cb);
        });
        out.push({ ...tp, low: w.lowOffset, high: w.highOffset });
      }
      return out;
    },
    async read(ranges, onRecords, signal) {
      const reached = new Map<string, number>();
      const open = new Map<string, ChangelogRange>();
      for (const r of ranges) {
        if (r.from >= r.until) reached.set(tpKey(r), r.from);
        else open.set(tpKey(r), r);
      }
      if (open.size === 0) return reached;
      for (const r of open.values()) eof.delete(tpKey(r));
      native.assign(
        [...open.values()].map((r) => ({ topic: r.topic, partition: r.partition, offset: r.from })),
      );
      try {
        while (open.size > 0) {
          signal?.throwIfAborted();
          native.setDefaultConsumeTimeout(200);
          let batch: Kafka.Message[];
          try {
            batch = await call<Kafka.Message[]>((cb) => native.consume(10_000, cb));
          } catch (e) {
            const err = classifyKafkaError(e, 'consume');
            if (err.kind === 'config') throw err;
            continue; // librdkafka recovers from transient errors by itself
          }
          signal?.throwIfAborted();
          const records = batch.map(toRecord);
          for (const r of records) reached.set(tpKey(r), Math.max(reached.get(tpKey(r)) ?? 0, r.offset + 1));
          if (records.length > 0) onRecords(records);
          // EOF reports the position past control records (commit markers), which no record shows.
          for (const [key, r] of open) {
            const end = Math.max(eof.get(key) ?? -1, reached.get(key) ?? -1);
            if (end >= r.until) {
              reached.set(key, end);
              open.delete(key);
            }
          }
        }
      } finally {
        native.unassign();
      }
      return reached;
    },
    close: () =>
      new Promise<void>((resolve) => {
        try {
          native.disconnect(() => resolve());
        } catch {
          resolve();
        }
      }),
  };
}
