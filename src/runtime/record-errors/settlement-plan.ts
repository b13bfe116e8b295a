import type { FetchedRecord, TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import type { RecordFailure, RecordPosition, StageOutput } from '../stage.ts';
import { errorText } from '../../errors/error-text.ts';
import { deadLetterOf } from './dead-letter.ts';
import { positionKey } from './position-key.ts';
import type { FailureHistory } from './failure-tracker.ts';
import { failureKind, isRetryable, type RecordErrorPolicy } from './policy.ts';
import type { RefusedOutputs } from './refused-outputs.ts';
import { asOriginal, forwardToRetry, retryOrigin } from './retry-topics.ts';

/**
 * The decision half of settling a processed batch: data in, plan out, no I/O and no mutation, so
 * every rule is a table-style unit test. `settleBatch` (settle-batch.ts) carries a plan out: reruns
 * what must be computed again, commits, then applies the after-commit steps (after-commit.ts).
 */

export interface DeadLetterDecision {
  /** The record as it was in its origin topic (a retry-topic hop is traced back). */
  record: FetchedRecord;
  error: unknown;
  kind: string;
  history: FailureHistory;
  /** The dead letter to produce in the batch's transaction. */
  letter: StageOutput;
}

export interface RetryDecision {
  partition: TopicPartition;
  /** The first record to process again; the partition is rewound here and paused meanwhile. */
  offset: number;
  delayMs: number;
  attempt: number;
  error: unknown;
}

/** One batch's record-error outcome as data. */
export type SettlementPlan =
  | { action: 'stop'; reason: string }
  | {
      action: 'commit';
      /** Records whose offsets commit now: everything but each retrying partition's tail. */
      keep: FetchedRecord[];
      /** Outputs of `keep`; undefined when they must be computed again from `rerun`. */
      outputs: StageOutput[] | undefined;
      /** Records to process again for their outputs (`keep` without dead letters); set iff `outputs` is not. */
      rerun: FetchedRecord[] | undefined;
      deadLetters: DeadLetterDecision[];
      retries: RetryDecision[];
      /** Records forwarded to their next retry topic (non-blocking retries); committed with `keep`. */
      forwards: StageOutput[];
      /** Failure histories to remember once the commit held (records waiting for an in-place retry). */
      failed: { position: RecordPosition; history: FailureHistory }[];
      /** Per kept record, whether it is dead-lettered: the dead-letter limit's window, once committed. */
      outcomes: boolean[];
    };

export interface SettlementInput {
  /** Every record of the batch, poison included, in position order. */
  records: readonly FetchedRecord[];
  outputs: readonly StageOutput[];
  failures: readonly RecordFailure[];
  /** Records dead-lettered unprocessed: their deliveries are exhausted. */
  poison: readonly FetchedRecord[];
  policy: RecordErrorPolicy;
  stageRetryable?: ((e: unknown) => boolean) | undefined;
  /** Failed attempts so far of a record (in-place retries); read only. */
  history(position: RecordPosition): FailureHistory | undefined;
  /** How often a poison record was delivered without completing (the delivery markers' count). */
  deliveries(position: RecordPosition): number | undefined;
  /** Why dead-lettering these outcomes would exceed the dead-letter limit, or undefined; read only. */
  deadLetterLimit(outcomes: readonly boolean[]): string | undefined;
  /** A stateful stage's store changes name no source: after any failure its batch is processed again. */
  stateful: boolean;
  group: string;
  stage: string;
  now: number;
}

/**
 * Decides, for a processed batch, which failures are retried (with back-off or through retry
 * topics) and which are dead-lettered, what commits, what must be processed again, and whether the
 * worker must stop instead. Per-partition order is kept: a retrying record holds back every later
 * record of its partition (their outputs are dropped and they are processed again after it); other
 * partitions commit normally.
 */
export function decideSettlement(input: SettlementInput): SettlementPlan {
  const byPosition = new Map(input.records.map((r) => [positionKey(r), r]));
  const deadLetters: Omit<DeadLetterDecision, 'letter'>[] = [];
  const forwards: StageOutput[] = [];
  const failed = new Map<string, { position: RecordPosition; history: FailureHistory }>();
  const retryAt = new Map<string, RetryDecision>();
  const rt = input.policy.retryTopics;
  const now = input.now;
  for (const record of input.poison) {
    const attempts = input.deliveries(record) ?? 1;
    const history = { attempts, firstFailure: input.history(record)?.firstFailure ?? now, lastFailure: now };
    const error = new Error(
      `delivery attempts exhausted: processing of this record never completed (stall, crash, timeout or lost membership)`,
    );
    deadLetters.push({ record, error, kind: 'redelivery-exhausted', history });
  }
  for (const f of input.failures) {
    const record = byPosition.get(positionKey(f.record));
    if (!record)
      throw new Error(`stage reported a failure for a record not in the batch: ${positionKey(f.record)}`);
    const retryable = isRetryable(f.error, input.policy, input.stageRetryable);
    if (rt) {
      // Each hop is a new record; its history travels in headers, not in the in-memory tracker.
      const forward = retryable ? forwardToRetry(record, rt, f.error, now) : undefined;
      if (forward) {
        forwards.push(forward);
        continue;
      }
      const origin = retryOrigin(record);
      const history = {
        attempts: origin.hops + 1,
        firstFailure: origin.firstFailure ?? now,
        lastFailure: now,
      };
      deadLetters.push({ record, error: f.error, kind: failureKind(f.error), history });
      continue;
    }
    const prev = input.history(record);
    const history = prev
      ? { attempts: prev.attempts + 1, firstFailure: prev.firstFailure, lastFailure: now }
      : { attempts: 1, firstFailure: now, lastFailure: now };
    const delay = retryable ? input.policy.backOff(history.attempts, now - history.firstFailure) : undefined;
    if (delay === undefined) {
      deadLetters.push({ record, error: f.error, kind: failureKind(f.error), history });
      continue;
    }
    failed.set(positionKey(record), { position: record, history });
    const k = tpKey(record);
    const earlier = retryAt.get(k);
    if (!earlier || record.offset < earlier.offset) {
      retryAt.set(k, {
        partition: { topic: record.topic, partition: record.partition },
        offset: record.offset,
        delayMs: delay,
        attempt: history.attempts,
        error: f.error,
      });
    }
  }
  const held = (p: RecordPosition) => {
    const r = retryAt.get(tpKey(p));
    return r !== undefined && p.offset >= r.offset;
  };
  const keep = input.records.filter((r) => !held(r));
  const dead = deadLetters.filter((d) => !held(d.record));
  const deadKeys = new Set(dead.map((d) => positionKey(d.record)));
  const first = dead[0];
  if (first && input.policy.deadLetters === false) {
    return {
      action: 'stop',
      reason:
        `record ${positionKey(first.record)} failed (${first.kind}) and record_errors.dead_letters is false: ` +
        `${errorText(first.error)}; consumption stopped, nothing of this batch committed`,
    };
  }
  const outcomes = keep.map((r) => deadKeys.has(positionKey(r)));
  const tripped = input.deadLetterLimit(outcomes);
  if (tripped !== undefined) {
    return {
      action: 'stop',
      reason: `dead-letter limit exceeded: ${tripped}; consumption stopped, nothing of this batch committed`,
    };
  }
  const outputs = pickOutputs(input, held);
  return {
    action: 'commit',
    keep,
    outputs,
    rerun: outputs === undefined ? keep.filter((r) => !deadKeys.has(positionKey(r))) : undefined,
    deadLetters: dead.map((d) => ({ ...d, record: asOriginal(d.record), letter: letterOf(input, d) })),
    retries: [...retryAt.values()],
    forwards,
    failed: [...failed.values()],
    outcomes,
  };
}

/**
 * The outputs that commit, or undefined when they cannot be picked out of the batch's: a held-back
 * record's outputs without a `source`, or a stateful stage after any failure.
 */
function pickOutputs(
  input: SettlementInput,
  held: (p: RecordPosition) => boolean,
): StageOutput[] | undefined {
  if (input.stateful && input.failures.length > 0) return undefined;
  // Asked once, not per output: a batch of n records with n outputs was O(n^2) here.
  let anyHeld: boolean | undefined;
  const kept: StageOutput[] = [];
  for (const o of input.outputs) {
    if (o.source === undefined) {
      anyHeld ??= input.records.some(held);
      if (anyHeld) return undefined;
      kept.push(o);
    } else if (!held(o.source)) kept.push(o);
  }
  return kept;
}

function letterOf(input: SettlementInput, d: Omit<DeadLetterDecision, 'letter'>): StageOutput {
  const record = asOriginal(d.record);
  return deadLetterOf(record, input.policy.deadLetterTopic(record.topic), {
    group: input.group,
    stage: input.stage,
    errorKind: d.kind,
    error: d.error,
    attempts: d.history.attempts,
    firstFailure: d.history.firstFailure,
    lastFailure: d.history.lastFailure,
  });
}

/**
 * The next decision round after Kafka refused outputs of a commit: the records they came from join
 * the failures (kind `refused`, so they are dead-lettered) and their outputs leave the batch. One
 * refusal can hide another (the client refuses a record before it is sent, and the transaction
 * fails before the broker sees the rest), so every round that names a record not failed yet leads
 * to one more; the rounds end because each removes at least one record's outputs. An error instead
 * when the refusal cannot be traced to input records, or names only records already failed (their
 * outputs left the batch, so what Kafka refuses now is not theirs): the loop's recovery takes it.
 */
export function afterRefusal(
  input: SettlementInput,
  refused: RefusedOutputs,
): SettlementInput | { error: unknown } {
  // Untraceable: the loop's recovery rewinds, and stops when the same refusal keeps coming.
  if (refused.unattributed.length > 0 || refused.failures.length === 0)
    return { error: refused.unattributed[0] ?? refused };
  const known = new Set(input.failures.map((f) => positionKey(f.record)));
  const fresh = refused.failures.filter((f) => !known.has(positionKey(f.record)));
  if (fresh.length === 0) return { error: refused };
  const failed = new Set(fresh.map((f) => positionKey(f.record)));
  const theirs = (o: StageOutput) =>
    input.records.length === 1 || (o.source !== undefined && failed.has(positionKey(o.source)));
  return {
    ...input,
    outputs: input.outputs.filter((o) => !theirs(o)),
    failures: [...input.failures, ...fresh],
  };
}
