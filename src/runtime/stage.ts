import type { Logger } from '../observability/logger.ts';
import type { PartitionState, StoreDeclaration, TimerDeclaration } from './state/contract.ts';
import { HamstringError } from '../errors/hamstring-error.ts';

/** An input record as a stage sees it: bytes plus where it came from. */
export interface StageRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer>>;
  readonly timestamp: number | undefined;
}

/** Where an input record sits; identifies it in failures and output attribution. */
export type RecordPosition = Pick<StageRecord, 'topic' | 'partition' | 'offset'>;

/** A record the stage wants produced, to any of its declared output topics. */
export interface StageOutput {
  topic: string;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string>;
  partition?: number;
  /**
   * The input record this output derives from. When every output names its source, a failing record
   * costs only the records after it in its partition; otherwise the runtime processes the rest again.
   */
  source?: RecordPosition;
}

/**
 * One input record the stage could not process. The runtime retries it with back-off (its partition
 * paused, the others flowing) or dead-letters it in the same transaction as the input offsets.
 */
export interface RecordFailure {
  record: RecordPosition;
  error: unknown;
}

/** Thrown from `process` to fail one record (the others are processed again without it). */
export class RecordError extends HamstringError {
  override readonly name = 'RecordError';
  readonly code = 'RECORD_FAILED';
  constructor(
    readonly record: RecordPosition,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * An error that retrying cannot fix (e.g. a record that does not decode): dead-lettered at once.
 * Any error with `retryable: false` counts the same.
 */
export class NonRetryableError extends HamstringError {
  override readonly name: string = 'NonRetryableError';
  readonly code: string = 'NON_RETRYABLE';
  readonly retryable = false;
  constructor(
    message: string,
    readonly kind = 'non-retryable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A record that cannot be decoded is never retried. */
export class DecodeError extends NonRetryableError {
  override readonly name = 'DecodeError';
  override readonly code = 'DECODE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'decode', options);
  }
}

export interface ProcessResult {
  outputs: StageOutput[];
  failures?: RecordFailure[];
}

/** The reason `ctx.signal` fires with when the batch ended normally; any other reason means stale. */
export const BATCH_FINISHED = 'batch finished';

/** What the runtime hands to `process` besides the records. */
export interface StageContext {
  /**
   * Fires when the batch became stale (rebalance, lost membership, shutdown). Long work should stop
   * early: whatever it returns after this fires is discarded and the records are fetched again.
   */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** The assignment epoch the batch was fetched under (diagnostics). */
  readonly epoch: number;
  /**
   * The state stores of one input partition (by partition number). Changes belong to this batch's
   * transaction. Throws for a stage that declares no stores or a partition not assigned.
   */
  state(partition: number): PartitionState;
}

/** What the runtime hands to `onTimer`: one assigned, restored partition and the time of the call. */
export interface TimerContext {
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly epoch: number;
  readonly partition: number;
  /** Wall-clock time of the call (ms since the epoch), from the runtime's clock. */
  readonly now: number;
  /** This partition's stores; changes belong to the timer call's transaction. */
  readonly state: PartitionState;
}

/**
 * A pipeline stage: a value, not a subclass. It declares its topics and a pure-ish `process`; the
 * runtime owns consumers, producers, offsets, transactions and recovery. Outputs of one batch and the
 * batch's input offsets commit together or not at all, so `process` may run more than once for the
 * same records (after an abort) and must not have side effects outside its return value, except in a
 * sink running in at-least-once mode.
 *
 * CPU-heavy work belongs in a worker thread (see `ThreadPool`): while `process` awaits, the runtime
 * keeps serving Kafka on the event loop, so a long batch never costs group membership.
 */
export interface Stage {
  /** Full internal name, e.g. `data_analysis.detector`; also the consumer group id by default. */
  readonly name: string;
  /** Component name, e.g. `detector`, for batch settings keyed by short name. */
  readonly shortName?: string;
  readonly inputTopics: readonly string[];
  /** Declared output topics; `'any'` for routers whose targets come from the data (DLT replay). */
  readonly outputTopics: readonly string[] | 'any';
  /** Overrides the runtime's retry classification for this stage's errors. */
  isRetryable?(error: unknown): boolean;
  process(records: readonly StageRecord[], ctx: StageContext): Promise<ProcessResult> | ProcessResult;
  /** Named key-value stores, partitioned like the input and backed by compacted changelog topics. */
  readonly stores?: Readonly<Record<string, StoreDeclaration>>;
  /** Calls `onTimer` per assigned partition at this interval, with no records. */
  readonly timer?: TimerDeclaration;
  /** Outputs of a timer call carry no `source`; its failures stop nothing but are logged. */
  onTimer?(ctx: TimerContext): Promise<ProcessResult> | ProcessResult;
}
