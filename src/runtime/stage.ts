import type { Logger } from '../observability/logger.ts';

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

/** A record the stage wants produced, to any of its declared output topics. */
export interface StageOutput {
  topic: string;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, Buffer | string>;
  partition?: number;
}

/** One input record the stage could not process; the runtime dead-letters it in the same transaction. */
export interface RecordFailure {
  record: Pick<StageRecord, 'topic' | 'partition' | 'offset'>;
  error: unknown;
}

export interface ProcessResult {
  outputs: StageOutput[];
  failures?: RecordFailure[];
}

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
  readonly outputTopics: readonly string[];
  process(records: readonly StageRecord[], ctx: StageContext): Promise<ProcessResult> | ProcessResult;
}
