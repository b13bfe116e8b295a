import type { FetchedRecord, TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import type { FailureHistory, FailureTracker } from './failure-tracker.ts';
import { failureKind, isRetryable, type RecordErrorPolicy } from './policy.ts';
import { forwardToRetry, retryOrigin } from './retry-topics.ts';
import type { RecordFailure, RecordPosition, StageOutput } from '../stage.ts';

export interface DeadLetterDecision {
  record: FetchedRecord;
  error: unknown;
  kind: string;
  history: FailureHistory;
}

export interface RetryDecision {
  partition: TopicPartition;
  /** The first record to process again; the partition is rewound here and paused meanwhile. */
  offset: number;
  delayMs: number;
  attempt: number;
  error: unknown;
}

/** What one processed batch commits. */
export interface Settlement {
  /** Records whose offsets commit now: everything but each retrying partition's tail. */
  keep: FetchedRecord[];
  /** Outputs of `keep`; undefined when outputs lack `source` and must be computed again. */
  outputs: StageOutput[] | undefined;
  deadLetters: DeadLetterDecision[];
  retries: RetryDecision[];
  /** Records forwarded to their next retry topic (non-blocking retries); committed with `keep`. */
  forwards: StageOutput[];
}

export const positionKey = (p: RecordPosition): string => `${p.topic}:${p.partition}@${p.offset}`;

/**
 * Decides, for a processed batch, which failures are retried (with back-off) and which are
 * dead-lettered, and what can commit. Per-partition order is kept: a retrying record holds back every
 * later record of its partition (their outputs are dropped and they are processed again after it);
 * other partitions commit normally. `poison` records were never processed (deliveries exhausted).
 */
export function planSettlement(args: {
  records: readonly FetchedRecord[];
  outputs: readonly StageOutput[];
  failures: readonly RecordFailure[];
  poison: readonly FetchedRecord[];
  policy: RecordErrorPolicy;
  stageRetryable?: (e: unknown) => boolean;
  tracker: FailureTracker;
  now: number;
}): Settlement {
  const byPosition = new Map(args.records.map((r) => [positionKey(r), r]));
  const deadLetters: DeadLetterDecision[] = [];
  const forwards: StageOutput[] = [];
  const retryAt = new Map<string, RetryDecision>();
  const rt = args.policy.retryTopics;
  for (const record of args.poison) {
    const history = args.tracker.fail(record, args.now);
    const error = new Error(
      `delivery attempts exhausted: processing of this record never completed (stall, crash, timeout or lost membership)`,
    );
    deadLetters.push({ record, error, kind: 'redelivery-exhausted', history });
  }
  for (const f of args.failures) {
    const record = byPosition.get(positionKey(f.record));
    if (!record)
      throw new Error(`stage reported a failure for a record not in the batch: ${positionKey(f.record)}`);
    const retryable = isRetryable(f.error, args.policy, args.stageRetryable);
    if (rt) {
      // Each hop is a new record; its history travels in headers, not in the in-memory tracker.
      const forward = retryable ? forwardToRetry(record, rt, f.error, args.now) : undefined;
      if (forward) {
        forwards.push(forward);
        continue;
      }
      const origin = retryOrigin(record);
      const history = {
        attempts: origin.hops + 1,
        firstFailure: origin.firstFailure ?? args.now,
        lastFailure: args.now,
      };
      deadLetters.push({ record, error: f.error, kind: failureKind(f.error), history });
      continue;
    }
    const history = args.tracker.fail(record, args.now);
    const delay = retryable
      ? args.policy.backOff(history.attempts, args.now - history.firstFailure)
      : undefined;
    if (delay === undefined) {
      deadLetters.push({ record, error: f.error, kind: failureKind(f.error), history });
      continue;
    }
    const k = tpKey(record);
    const prev = retryAt.get(k);
    if (!prev || record.offset < prev.offset) {
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
  const keep = args.records.filter((r) => !held(r));
  let outputs: StageOutput[] | undefined = [...args.outputs];
  if (retryAt.size > 0) {
    outputs = args.outputs.every((o) => o.source !== undefined)
      ? args.outputs.filter((o) => !held(o.source!))
      : undefined;
  }
  return {
    keep,
    outputs,
    deadLetters: deadLetters.filter((d) => !held(d.record)),
    retries: [...retryAt.values()],
    forwards,
  };
}
