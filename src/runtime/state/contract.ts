/**
 * The contract between stages and the runtime's state stores and timers. Stages program against these
 * types only; the runtime owns the changelogs, the local copies, restore and the transactions.
 *
 * Stores are partitioned like the input: one store instance per (store name, input partition number).
 * A stateful stage whose input topics differ in partition count is a configuration error at start.
 * Every change made while a batch or a timer call runs belongs to that call's transaction: it reaches
 * the changelog in the same transaction as the outputs and input offsets, and it is rolled back in
 * memory when that transaction aborts or the batch turns stale.
 */

/** Turns a store value into bytes for the changelog and the local copy, and back. */
export interface Codec<V> {
  encode(value: V): Buffer;
  decode(bytes: Buffer): V;
}

/** What a stage declares for each named store. JSON is the default codec. */
export interface StoreDeclaration<V = unknown> {
  readonly codec?: Codec<V>;
}

/**
 * One partition's key-value store. Synchronous: reads and writes go to the in-memory view of the
 * current transaction; the runtime makes them durable when the transaction commits.
 */
export interface KeyValueStore<V> {
  get(key: string): V | undefined;
  has(key: string): boolean;
  put(key: string, value: V): void;
  delete(key: string): void;
  /** Entries in ascending key order (JavaScript string order), optionally bounded: from <= key < to. */
  range(bounds?: { from?: string; to?: string }): IterableIterator<[string, V]>;
  readonly size: number;
}

/** The stores of one input partition. */
export interface PartitionState {
  readonly partition: number;
  store<V>(name: string): KeyValueStore<V>;
}

/**
 * A call with no records, per assigned partition, at a wall-clock interval, in a transaction like a
 * batch. It never fires for a partition that is being restored or is not assigned.
 */
export interface TimerDeclaration {
  readonly intervalMs: number;
}
