import { code, codeName } from './error-codes.ts';
import { decisionOf } from './error-table.ts';
import { KafkaError, type ErrorKind, type KafkaOperation, type RawKafkaError } from './kafka-error.ts';

/** Kinds a code decides on its own, before librdkafka's flags: they hold whatever the flags say. */
const DETERMINISTIC: ReadonlySet<ErrorKind> = new Set(['membership', 'fenced', 'authorization', 'refused']);

/** Transactional calls whose retriable failures are retried in place (same call, same arguments). */
const RETRY_IN_PLACE: ReadonlySet<KafkaOperation> = new Set([
  'init-transactions',
  'send-offsets',
  'commit-transaction',
  'abort-transaction',
  'commit-offsets',
  'committed',
]);

/**
 * The table (error-table.ts) decides per code; librdkafka's flags decide per occurrence. Order:
 * 1. membership, fenced, authorization, refused by code. Membership wins over txnRequiresAbort:
 *    send-offsets with an expired generation is abortable for librdkafka, but only a fresh consumer
 *    (new generation) lets the redelivered batch commit. Refused wins too: a commit that failed
 *    because one record was refused is abortable for librdkafka, but the record must be handled.
 * 2. fatal, then txnRequiresAbort, then retriable on a call retried in place, by flags.
 * 3. the code's own kind, then retriable by flag, then other.
 * A code's kind may be refined by the broker's message (MESSAGE_REFINEMENTS), never elsewhere.
 */
function kindOf(raw: RawKafkaError, errCode: number, operation: KafkaOperation): ErrorKind {
  const decided = decisionOf(codeName(errCode), operation, raw.message);
  if (decided !== undefined && decided !== 'by-flags' && DETERMINISTIC.has(decided)) return decided;
  if (raw.isFatal === true || decided === 'fatal') return 'fatal';
  if (raw.isTxnRequiresAbort === true) return 'abortable';
  if (raw.isRetriable === true && RETRY_IN_PLACE.has(operation)) return 'retriable';
  if (decided !== undefined && decided !== 'by-flags' && decided !== 'other') return decided;
  if (raw.isRetriable === true) return 'retriable';
  return 'other';
}

/**
 * Maps any error thrown or reported by the Kafka client to a `KafkaError` with one `ErrorKind`.
 * The runtime switches on `kind` only, never on codes or message strings.
 */
export function classifyKafkaError(err: unknown, operation: KafkaOperation): KafkaError {
  if (err instanceof KafkaError) return err;
  const raw: RawKafkaError = typeof err === 'object' && err !== null ? err : { message: String(err) };
  const errCode = typeof raw.code === 'number' ? raw.code : code('_FAIL');
  const flags = {
    fatal: raw.isFatal === true,
    retriable: raw.isRetriable === true,
    txnRequiresAbort: raw.isTxnRequiresAbort === true,
  };
  const message = raw.message ?? (err instanceof Error ? err.message : String(err));
  return new KafkaError(kindOf(raw, errCode, operation), errCode, operation, message, flags);
}

/** An error of the given code and flags, as the client would report it (fault injection and tests). */
export function syntheticKafkaError(
  name: string,
  operation: KafkaOperation,
  flags: Partial<Pick<RawKafkaError, 'isFatal' | 'isRetriable' | 'isTxnRequiresAbort'>> = {},
): KafkaError {
  return classifyKafkaError({ code: code(name), message: `injected ${name}`, ...flags }, operation);
}

const ownErrors = new WeakSet<KafkaError>();

/**
 * A configuration error the runtime finds itself (no Kafka client call failed): kind `config`, its
 * message the whole story. librdkafka's code stays out of reports (see {@link isRuntimeError}), as
 * naming `_INVALID_ARG` for a stage's mistake would send the operator to the client.
 */
export function runtimeConfigError(message: string, operation: KafkaOperation): KafkaError {
  const err = classifyKafkaError({ code: code('_INVALID_ARG'), message }, operation);
  ownErrors.add(err);
  return err;
}

/** Whether `err` came from {@link runtimeConfigError} rather than from the Kafka client. */
export function isRuntimeError(err: KafkaError): boolean {
  return ownErrors.has(err);
}
