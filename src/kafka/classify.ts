import { code } from './error-codes.ts';
import { KafkaError, type ErrorKind, type KafkaOperation, type RawKafkaError } from './kafka-error.ts';

const MEMBERSHIP = new Set(
  [
    'UNKNOWN_MEMBER_ID',
    'ILLEGAL_GENERATION',
    'REBALANCE_IN_PROGRESS',
    'FENCED_INSTANCE_ID',
    'UNRELEASED_INSTANCE_ID',
    // KIP-848 consumer protocol equivalents of an expired generation.
    'FENCED_MEMBER_EPOCH',
    'STALE_MEMBER_EPOCH',
    '_MAX_POLL_EXCEEDED',
    '_ASSIGNMENT_LOST',
  ].map(code),
);

// INVALID_PRODUCER_EPOCH is not here: since KIP-360 librdkafka reports it (e.g. after a transaction
// timeout) as abortable and bumps the epoch itself; only these mean a newer instance took the id.
const FENCED = new Set(['_FENCED', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'].map(code));

const TRANSPORT = new Set(
  [
    '_TIMED_OUT',
    '_MSG_TIMED_OUT',
    '_TIMED_OUT_QUEUE',
    '_TRANSPORT',
    '_RESOLVE',
    '_ALL_BROKERS_DOWN',
    'REQUEST_TIMED_OUT',
    'NETWORK_EXCEPTION',
  ].map(code),
);

const FATAL = code('_FATAL');

const CONFIG = new Set(['_INVALID_ARG', '_NOT_CONFIGURED', '_UNKNOWN_TOPIC', '_UNKNOWN_PARTITION'].map(code));

/** Transactional calls whose retriable failures are retried in place (same call, same arguments). */
const RETRY_IN_PLACE: ReadonlySet<KafkaOperation> = new Set([
  'init-transactions',
  'send-offsets',
  'commit-transaction',
  'abort-transaction',
  'commit-offsets',
  'committed',
]);

function kindOf(raw: RawKafkaError, errCode: number, operation: KafkaOperation): ErrorKind {
  // Membership wins over txnRequiresAbort: send-offsets with an expired generation is abortable for
  // librdkafka, but only a fresh consumer (new generation) lets the redelivered batch commit.
  if (MEMBERSHIP.has(errCode)) return 'membership';
  if (FENCED.has(errCode)) return 'fenced';
  if (raw.isFatal === true || errCode === FATAL) return 'fatal';
  if (raw.isTxnRequiresAbort === true) return 'abortable';
  if (raw.isRetriable === true && RETRY_IN_PLACE.has(operation)) return 'retriable';
  if (TRANSPORT.has(errCode)) return 'transport';
  if (CONFIG.has(errCode)) return 'config';
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
