/** A record as fetched from Kafka. Keys and values stay bytes; decoding is the stage's business. */
export interface FetchedRecord {
  topic: string;
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
  /** Milliseconds since the epoch, as set by the producer or the broker. */
  timestamp: number | undefined;
}

/** A record to produce. */
export interface OutgoingRecord {
  topic: string;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string>;
  /** Explicit partition; by default the key's hash decides (murmur2, as the Java client: client-config.ts). */
  partition?: number;
  timestamp?: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** The NEXT offset to read (last processed + 1), as Kafka stores committed offsets. */
export interface TopicPartitionOffset extends TopicPartition {
  offset: number;
}

/** librdkafka's "no offset": what a committed-offset query returns for a partition never committed. */
export const OFFSET_INVALID = -1001;

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}:${tp.partition}`;
}
