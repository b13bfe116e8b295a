import { codeName } from './error-codes.ts';

/**
 * The closed set of error kinds the runtime switches on (docs/recovery.md, "One place decides, one place acts").
 * - membership: the consumer's group generation is gone; offsets of this generation can never commit.
 * - transport: Kafka is unreachable or a request timed out; the producer and consumer are rebuilt.
 * - abortable: the transaction must be aborted; producer and consumer stay usable.
 * - retriable: the same call with the same arguments may succeed; retry within the API timeout.
 * - fenced: a newer producer with the same transactional id exists: this instance is a zombie.
 * - fatal: the producer is broken for another reason; only a new producer instance can continue.
 * - config: a local misuse or configuration error; retrying cannot help.
 * - authorization: the cluster refuses this principal (topic, group or transactional id ACL).
 * - refused: the broker or the client refused one produced record for its size or content (too
 *   large, invalid, null key on a compacted topic, timestamp out of range): deterministic, so it is
 *   attributed to the input record it came from instead of being retried.
 * - other: anything else; treated as abortable by the runtime, and logged loudly.
 */
export type ErrorKind =
  | 'membership'
  | 'transport'
  | 'abortable'
  | 'retriable'
  | 'fenced'
  | 'fatal'
  | 'config'
  | 'authorization'
  | 'refused'
  | 'other';

/** The Kafka operation that failed; part of the classification and of every log line. */
export type KafkaOperation =
  | 'connect'
  | 'consume'
  | 'commit-offsets'
  | 'committed'
  | 'seek'
  | 'init-transactions'
  | 'begin-transaction'
  | 'produce'
  | 'delivery'
  | 'send-offsets'
  | 'commit-transaction'
  | 'abort-transaction'
  | 'admin'
  | 'client';

/** Raw error shape of the librdkafka binding (`LibrdKafkaError`). */
export interface RawKafkaError {
  message?: string;
  code?: number;
  isFatal?: boolean;
  isRetriable?: boolean;
  isTxnRequiresAbort?: boolean;
}

/**
 * The produced record an error is about: set on `refused` errors of produce and delivery, so the
 * runtime can attribute them to the input record the output came from.
 */
export interface ProducedRecordRef {
  topic: string;
  /** Unknown (-1) when the client refused the record before a partition was chosen. */
  partition: number;
  /** Position of the record among those produced since the transaction began (0-based). */
  index: number;
  /** Size of key, value and headers in bytes. */
  bytes: number;
}

/** A classified Kafka error. Created only by `classifyKafkaError`, so the kind is decided once. */
export class KafkaError extends Error {
  override readonly name = 'KafkaError';
  constructor(
    readonly kind: ErrorKind,
    readonly code: number,
    readonly operation: KafkaOperation,
    message: string,
    readonly flags: { fatal: boolean; retriable: boolean; txnRequiresAbort: boolean },
    readonly record?: ProducedRecordRef,
  ) {
    super(message);
  }

  /** The same error about one produced record, its message naming the record. */
  about(record: ProducedRecordRef, detail: string): KafkaError {
    return new KafkaError(
      this.kind,
      this.code,
      this.operation,
      `${this.message}: ${detail}`,
      this.flags,
      record,
    );
  }

  /** librdkafka's name without the `ERR_` prefix, e.g. `_MAX_POLL_EXCEEDED`. */
  get codeName(): string {
    return codeName(this.code);
  }

  /** Fields for structured logs. */
  toLog(): Record<string, unknown> {
    return {
      kind: this.kind,
      code: this.codeName,
      operation: this.operation,
      message: this.message,
      ...this.flags,
      ...(this.record ? { record: this.record } : {}),
    };
  }
}
