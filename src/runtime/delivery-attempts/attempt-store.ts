import type { TopicPartition } from '../../kafka/records.ts';

/**
 * How often the batch starting at `offset` of a partition was handed to the stage without its
 * offsets committing: a crash, a stall past max.poll.interval, a processing timeout or a rebalance
 * all leave the same trace. While `suspectEnd` is set the partition is processed one record at a
 * time, up to and including that offset, to find the record(s) that never complete.
 */
export interface DeliveryMarker {
  offset: number;
  count: number;
  suspectEnd?: number;
  /**
   * The last offset of each delivery of the batch starting at `offset` (while not searching), or of
   * the failed batch deliveries the search began with (while searching): a dead letter's `attempts`
   * counts a record's deliveries in batches as well as alone.
   */
  batchEnds?: number[];
}

/**
 * Durable delivery-attempt bookkeeping per (group, topic, partition). It cannot live in the output
 * transaction: an aborted or never-committed transaction is exactly the case it must remember.
 */
export interface AttemptStore {
  start(): Promise<void>;
  /** Latest markers of these partitions, including everything any instance wrote before this call. */
  get(group: string, partitions: readonly TopicPartition[]): Promise<Map<string, DeliveryMarker>>;
  /** Records markers durably (acknowledged by the broker) before the attempt starts. */
  put(
    group: string,
    markers: readonly { partition: TopicPartition; marker: DeliveryMarker }[],
  ): Promise<void>;
  close(): Promise<void>;
}
