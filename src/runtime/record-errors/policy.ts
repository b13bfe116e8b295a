import type { BackOff } from '../backoff.ts';
import type { RetryTopics } from './retry-topics.ts';
import { exponentialBackOff } from '../backoff.ts';

/**
 * How a stage's record failures are handled: which errors are retried, with which back-off, where
 * dead letters go, when dead-lettering must stop the worker, and how many deliveries a batch may
 * take without committing before its records are isolated.
 */
export interface RecordErrorPolicy {
  /** Delay before retry `attempt` (1-based) or undefined when attempts are exhausted. */
  backOff: BackOff;
  /** Error kinds (see `errorKindOf`) that are never retried. `decode` is always among them. */
  nonRetryableKinds: readonly string[];
  deadLetterTopic(inputTopic: string): string;
  /** Stop (and turn readiness red) rather than empty a topic into its DLT. */
  deadLetterLimit: { maxShare: number; window: number; maxConsecutive: number };
  /** Deliveries of the same uncommitted batch start before isolating record by record, and per record. */
  maxDeliveries: number;
  /** A batch whose processing takes longer is abandoned (and counts as a failed delivery). */
  processingTimeoutMs: number;
  /** Non-blocking retries through `<topic>-retry-<n>` instead of in-place back-off (gives up order). */
  retryTopics?: RetryTopics;
  /** false: a record that would be dead-lettered stops the worker instead. Default true. */
  deadLetters?: boolean;
  /** Retry and dead-letter topics are created at start (false: only checked). Default true. */
  createTopics?: boolean;
  /** Replication of topics the runtime creates; default the broker's default.replication.factor. */
  topicReplicationFactor?: number;
}

export const defaultRecordErrorPolicy: RecordErrorPolicy = {
  backOff: exponentialBackOff({
    initialMs: 1_000,
    multiplier: 2,
    maxIntervalMs: 60_000,
    maxAttempts: 9,
    jitter: 0.1,
  }),
  nonRetryableKinds: ['decode', 'non-retryable', 'validation'],
  deadLetterTopic: (topic) => `${topic}.DLT`,
  deadLetterLimit: { maxShare: 0.5, window: 200, maxConsecutive: 100 },
  maxDeliveries: 3,
  processingTimeoutMs: 300_000,
};

/** The kind of a stage error: its `kind` property if it has one, else its class name. */
export function errorKindOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const kind = (error as { kind?: unknown }).kind;
    if (typeof kind === 'string') return kind;
    if (error instanceof Error) return error.name;
  }
  return typeof error;
}

/**
 * The classification kind of a failure, for the dead letter's `error.kind` header and metrics: the
 * error's own `kind` (a KafkaError's kind, `decode`, `validation`, ...), else `processing` (an
 * exception thrown by the stage's code). Unlike `errorKindOf` it never answers with a class name,
 * which the dead letter carries separately.
 */
export function failureKind(error: unknown): string {
  const kind = typeof error === 'object' && error !== null ? (error as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' ? kind : 'processing';
}

/** Retry unless the error says it is not retryable or its kind is configured as non-retryable. */
export function isRetryable(
  error: unknown,
  policy: Pick<RecordErrorPolicy, 'nonRetryableKinds'>,
  stageOverride?: (e: unknown) => boolean,
): boolean {
  // A record Kafka refused (too large, invalid) is refused again: the same bytes, the same answer.
  if (errorKindOf(error) === 'decode' || errorKindOf(error) === 'refused') return false;
  if (stageOverride) return stageOverride(error);
  if (typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === false)
    return false;
  return !policy.nonRetryableKinds.includes(errorKindOf(error));
}
