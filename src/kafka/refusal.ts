import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import { KafkaError } from './kafka-error.ts';
import { PRODUCED_OPERATIONS } from './error-table.ts';

/**
 * The cluster refusing a client's credentials or permissions, told in the operator's terms.
 *
 * librdkafka reports a failed TLS handshake or SASL authentication only as a log line (facility
 * FAIL) and then reconnects forever; `connect()` ends, much later, with "broker transport failure".
 * {@link credentialFailureOf} turns those lines into `authorization` errors (`_SSL`,
 * `_AUTHENTICATION`), which no retry can fix, so clients fail at the first one instead
 * (see {@link watchCredentials}).
 */

const TLS_REFUSED =
  /SSL handshake failed|certificate verify failed|alert (bad certificate|certificate unknown|unknown ca|certificate required|handshake failure)/;
const SASL_REFUSED = /SASL authentication error|SASL .*(failed|error)|Authentication failed/;

/** The refusal a librdkafka log line reports, or undefined for any other line. */
export function credentialFailureOf(event: { message: string; fac?: string }): KafkaError | undefined {
  if (event.fac !== 'FAIL') return undefined;
  const text = event.message.replace(/^\[thrd:[^\]]*\]: /, '');
  const name = SASL_REFUSED.test(text) ? '_AUTHENTICATION' : TLS_REFUSED.test(text) ? '_SSL' : undefined;
  return name === undefined ? undefined : classifyKafkaError({ code: code(name), message: text }, 'connect');
}

/** A client whose log lines can be followed (both client kinds of the binding and the admin). */
export interface LogEvents {
  on(event: 'event.log', listener: (event: { message: string; fac?: string }) => void): unknown;
}

/** Follows a client's log for a refusal of its credentials. */
export interface CredentialsWatch {
  /** The first refusal seen, if any. */
  failure(): KafkaError | undefined;
  /** `call`, unless the credentials are (or get) refused first: then that refusal. */
  guard<T>(call: Promise<T>): Promise<T>;
}

export function watchCredentials(native: LogEvents, onRefused?: (err: KafkaError) => void): CredentialsWatch {
  let failure: KafkaError | undefined;
  const waiting = new Set<(err: KafkaError) => void>();
  native.on('event.log', (event) => {
    if (failure !== undefined) return;
    const err = credentialFailureOf(event);
    if (err === undefined) return;
    failure = err;
    for (const reject of waiting) reject(err);
    waiting.clear();
    onRefused?.(err);
  });
  return {
    failure: () => failure,
    guard<T>(call: Promise<T>): Promise<T> {
      if (failure !== undefined) {
        call.catch(() => undefined);
        return Promise.reject(failure);
      }
      return new Promise<T>((resolve, reject) => {
        waiting.add(reject);
        call.then(resolve, reject).finally(() => waiting.delete(reject));
      });
    },
  };
}

/** Who a worker is and what it touches, for naming what an authorization error refused. */
export interface AccessContext {
  principal: string;
  groupId: string;
  transactionalId?: string | undefined;
  inputs: readonly string[];
  outputs: readonly string[];
  /**
   * What its transactions write beside the outputs (dead-letter, retry and changelog topics): a
   * refused AddPartitionsToTxn does not say which topic, so each one is named.
   */
  alsoWritten?: readonly string[];
}

/** librdkafka's message when the coordinator refused partitions of the transaction. */
const ADD_PARTITIONS = /add partition\(s\) to transaction/i;

/** The ACL operation and resource an authorization code refused, for this worker. */
function refusedAccess(err: KafkaError, c: AccessContext): string | undefined {
  switch (err.codeName) {
    case 'GROUP_AUTHORIZATION_FAILED':
      return `READ on GROUP ${c.groupId}`;
    case 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED':
      return `WRITE on TRANSACTIONAL_ID ${c.transactionalId ?? '(none)'}`;
    case 'CLUSTER_AUTHORIZATION_FAILED':
      return 'IDEMPOTENT_WRITE on CLUSTER kafka-cluster';
    case 'TOPIC_AUTHORIZATION_FAILED': {
      if (err.record !== undefined) return `WRITE on TOPIC ${err.record.topic}`;
      // A refused AddPartitionsToTxn is about the topics the transaction writes, whichever call
      // reported it (send-offsets, commit): not about reading.
      const written = PRODUCED_OPERATIONS.has(err.operation) || ADD_PARTITIONS.test(err.message);
      return written
        ? `WRITE on TOPIC ${[...c.outputs, ...(c.alsoWritten ?? [])].join(', ')}`
        : `READ or DESCRIBE on TOPIC ${[...c.inputs, ...c.outputs].join(', ')}`;
    }
    default:
      return undefined;
  }
}

/**
 * The same error, its message naming the principal and what it was refused: `User:alice may not
 * READ on GROUP g` or `TLS handshake of User:alice failed`. Other kinds are returned as they are.
 */
export function explainRefusal(err: KafkaError, c: AccessContext): KafkaError {
  if (err.kind !== 'authorization') return err;
  const access = refusedAccess(err, c);
  const detail =
    access !== undefined
      ? `${c.principal} may not ${access}`
      : err.codeName === '_SSL'
        ? `TLS handshake of ${c.principal} failed (check kafka_security.ca_file and the client certificate)`
        : `${c.principal} could not authenticate (check the SASL user, mechanism and password)`;
  if (err.message.startsWith(detail)) return err;
  return new KafkaError(
    err.kind,
    err.code,
    err.operation,
    `${detail}: ${err.message}`,
    err.flags,
    err.record,
  );
}
