import type { TopicPartition } from '../kafka/records.ts';

/**
 * When one transaction may span several consumed batches (like Kafka Streams' commit.interval.ms).
 * Absent: every batch is its own transaction.
 */
export interface CommitInterval {
  /** The transaction commits once its first batch is this old (ms). */
  maxMs?: number;
  /** The transaction commits once it holds at least this many input records. */
  maxRecords?: number;
}

type Position = TopicPartition & { offset: number };

/**
 * The input records of the open transaction and when it is due. Pure bookkeeping: the worker
 * produces each batch's outputs into the open transaction, adds the batch here, and sends the
 * offsets and commits once {@link due} says so (or when the input runs dry, or before anything
 * that must not find a transaction open).
 */
export class TransactionSpan<R extends Position = Position> {
  readonly #interval: CommitInterval | undefined;
  #openedAt: number | undefined;
  #records: R[] = [];
  #batches = 0;

  constructor(interval: CommitInterval | undefined) {
    this.#interval = interval;
  }

  /** True when a batch was added since the last {@link clear}. */
  get open(): boolean {
    return this.#openedAt !== undefined;
  }

  /** Every input record of the open transaction, in the order added (for its offsets and partitions). */
  get records(): readonly R[] {
    return this.#records;
  }

  get batches(): number {
    return this.#batches;
  }

  add(records: readonly R[], now: number): void {
    this.#openedAt ??= now;
    this.#batches += 1;
    for (const r of records) this.#records.push(r);
  }

  /** Whether the open transaction must commit now. Without an interval, always (one batch each). */
  due(now: number): boolean {
    if (this.#openedAt === undefined) return false;
    const i = this.#interval;
    if (i === undefined || (i.maxMs === undefined && i.maxRecords === undefined)) return true;
    if (i.maxRecords !== undefined && this.#records.length >= i.maxRecords) return true;
    return i.maxMs !== undefined && now - this.#openedAt >= i.maxMs;
  }

  /** How long the next consume may wait: the batch timeout, shortened to the time left to due. */
  consumeTimeoutMs(now: number, batchTimeoutMs: number): number {
    const maxMs = this.#interval?.maxMs;
    if (this.#openedAt === undefined || maxMs === undefined) return batchTimeoutMs;
    return Math.max(0, Math.min(batchTimeoutMs, this.#openedAt + maxMs - now));
  }

  clear(): void {
    this.#openedAt = undefined;
    this.#records = [];
    this.#batches = 0;
  }
}
