import { z } from 'zod';
import { nonEmptyString, positiveInt, topicName, stageName } from './value-schemas.ts';

const fixedBackOffSchema = z.strictObject({
  type: z.literal('fixed'),
  interval_ms: positiveInt(),
  max_attempts: positiveInt().default(9),
});

const exponentialBackOffSchema = z.strictObject({
  type: z.literal('exponential'),
  initial_ms: positiveInt().default(1_000),
  multiplier: z.number().min(1).default(2),
  max_interval_ms: positiveInt().default(60_000),
  /** Give up once this long has passed since the first failure (omit: no bound). */
  max_elapsed_ms: positiveInt().optional(),
  max_attempts: positiveInt().default(9),
  /** 0..1: each delay is drawn from [d*(1-jitter), d]. */
  jitter: z.number().min(0).max(1).default(0.1),
});

export const backOffSchema = z.discriminatedUnion('type', [fixedBackOffSchema, exponentialBackOffSchema]);

/** Non-blocking retries through `<topic>-retry-<n>` topics; gives up per-key order for the retried record. */
const retryTopicsSchema = z.strictObject({ delays_ms: z.array(positiveInt()).min(1) });

/** Settings a stage may override. */
const stageRecordErrorsSchema = z.strictObject({
  retry_topics: retryTopicsSchema.optional(),
  backoff: backOffSchema.optional(),
  non_retryable_kinds: z.array(nonEmptyString()).optional(),
  /** Full dead-letter topic name for every input topic of the stage (default `<input>.DLT`). */
  dead_letter_topic: topicName().optional(),
  dead_letters: z.boolean().optional(),
  max_deliveries: positiveInt().optional(),
  processing_timeout_ms: positiveInt().optional(),
});

/**
 * `environment.record_errors`: what happens to records a stage fails. Retried with back-off (only
 * their partition waits), then dead-lettered to `<topic><dead_letter_suffix>` in the transaction that
 * commits the input offset; a dead-letter limit stops the worker; bounded redelivery isolates
 * records whose processing never completes.
 */
export const recordErrorsSchema = z.strictObject({
  backoff: backOffSchema.prefault({ type: 'exponential' }),
  /** Omit for in-place back-off (order kept, the partition waits); set for non-blocking retry topics. */
  retry_topics: retryTopicsSchema.optional(),
  /** Error kinds (an error's `kind`, else its class name) never retried; `decode` always is. */
  non_retryable_kinds: z.array(nonEmptyString()).default(['decode', 'validation', 'non-retryable']),
  dead_letter_suffix: nonEmptyString().default('.DLT'),
  /** false: a record that would be dead-lettered stops the worker instead, naming record and reason. */
  dead_letters: z.boolean().default(true),
  /**
   * Retry and dead-letter topics are created at start with the input's partition count (false: only
   * checked, and a missing one stops the worker at start, naming it).
   */
  create_topics: z.boolean().default(true),
  /** Replication of the topics the runtime creates; omitted: the broker's default.replication.factor. */
  topic_replication_factor: positiveInt().optional(),
  dead_letter_limit: z
    .strictObject({
      /** Stop when more than this share of the last `window` records were dead-lettered. */
      max_share: z.number().gt(0).max(1).default(0.5),
      window: positiveInt().default(200),
      max_consecutive: positiveInt().default(100),
    })
    .prefault({}),
  /** Deliveries of a batch start without a commit before its records are isolated, and per record. */
  max_deliveries: positiveInt().default(3),
  /** A batch still processing after this long is abandoned (counts as a failed delivery). */
  processing_timeout_ms: positiveInt().default(300_000),
  /** Durable delivery markers (compacted topic): bounded redelivery across crashes and stalls. */
  track_delivery_attempts: z.boolean().default(true),
  delivery_attempts_topic: topicName().default('hamstring.delivery-attempts'),
  stages: z.record(stageName(), stageRecordErrorsSchema).default({}),
});

export type BackOffConfig = z.output<typeof backOffSchema>;
