import type { ErrorKind, KafkaOperation } from './kafka-error.ts';

/**
 * How one librdkafka or Kafka error code is classified:
 * - an `ErrorKind`: decided by the code alone;
 * - `by-flags`: the meaning depends on the occurrence, so librdkafka's flags decide (fatal,
 *   txnRequiresAbort, retriable), and an unflagged occurrence is `other`;
 * - `{ produced, otherwise }`: the code means something else for a produced record (produce,
 *   delivery, and the commit that carries a failed delivery) than for any other call.
 */
export type CodeDecision =
  ErrorKind | 'by-flags' | { produced: ErrorKind; otherwise: ErrorKind | 'by-flags' };

/** Operations whose error concerns one produced record (a commit fails with its delivery's code). */
export const PRODUCED_OPERATIONS: ReadonlySet<KafkaOperation> = new Set([
  'produce',
  'delivery',
  'commit-transaction',
]);

/**
 * Every error code of librdkafka 2.x (`Kafka.CODES.ERRORS`, local codes with a leading `_`), decided
 * once. A unit test fails when the binding knows a code this table does not, so an upgrade forces a
 * decision. Aliases (COORDINATOR_LOAD_IN_PROGRESS / GROUP_LOAD_IN_PROGRESS, ...) share a number and
 * must share a decision.
 *
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED is `authorization`, not `fenced`: it means the principal
 * lacks the ACL on the transactional id, and no other instance exists. Both stop the worker, but
 * `fenced` would tell the operator to look for a zombie that is not there. librdkafka flags it fatal,
 * and like the Java client (TransactionalIdAuthorizationException is fatal) no new producer can help.
 */
export const ERROR_TABLE: Readonly<Record<string, CodeDecision>> = {
  // Not errors: markers and events the binding reports through the same channel.
  _BEGIN: 'other',
  _END: 'other',
  NO_ERROR: 'other',
  _PARTITION_EOF: 'other',
  _ASSIGN_PARTITIONS: 'other',
  _REVOKE_PARTITIONS: 'other',
  _NOOP: 'other',

  // The group generation is gone: only a fresh consumer can commit again.
  UNKNOWN_MEMBER_ID: 'membership',
  ILLEGAL_GENERATION: 'membership',
  REBALANCE_IN_PROGRESS: 'membership',
  FENCED_INSTANCE_ID: 'membership',
  UNRELEASED_INSTANCE_ID: 'membership',
  FENCED_MEMBER_EPOCH: 'membership',
  STALE_MEMBER_EPOCH: 'membership',
  _MAX_POLL_EXCEEDED: 'membership',
  _ASSIGNMENT_LOST: 'membership',

  // Kafka is unreachable or did not answer in time.
  _TRANSPORT: 'transport',
  _RESOLVE: 'transport',
  _MSG_TIMED_OUT: 'transport',
  _TIMED_OUT: 'transport',
  _TIMED_OUT_QUEUE: 'transport',
  _ALL_BROKERS_DOWN: 'transport',
  _NODE_UPDATE: 'transport',
  _DESTROY_BROKER: 'transport',
  REQUEST_TIMED_OUT: 'transport',
  NETWORK_EXCEPTION: 'transport',
  BROKER_NOT_AVAILABLE: 'transport',
  REBOOTSTRAP_REQUIRED: 'transport',

  // Another instance took the transactional id.
  _FENCED: 'fenced',
  PRODUCER_FENCED: 'fenced',

  // The client itself is broken.
  _FATAL: 'fatal',
  _CRIT_SYS_RESOURCE: 'fatal',
  _INCONSISTENT: 'fatal',
  _GAPLESS_GUARANTEE: 'fatal',

  // The cluster refuses this principal: retrying with the same credentials cannot help.
  TOPIC_AUTHORIZATION_FAILED: 'authorization',
  GROUP_AUTHORIZATION_FAILED: 'authorization',
  CLUSTER_AUTHORIZATION_FAILED: 'authorization',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'authorization',
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: 'authorization',
  DELEGATION_TOKEN_EXPIRED: 'authorization',
  SASL_AUTHENTICATION_FAILED: 'authorization',
  _AUTHENTICATION: 'authorization',
  // A failed TLS handshake (untrusted broker certificate, client certificate refused): the same
  // files fail again, so it stops like a refused password instead of reconnecting forever.
  _SSL: 'authorization',
  UNACCEPTABLE_CREDENTIAL: 'authorization',
  PRINCIPAL_DESERIALIZATION_FAILURE: 'authorization',

  // One produced record is refused for its size or content: the same bytes are refused again.
  MSG_SIZE_TOO_LARGE: 'refused',
  RECORD_LIST_TOO_LARGE: 'refused',
  INVALID_MSG_SIZE: 'refused',
  INVALID_RECORD: 'refused',
  INVALID_TIMESTAMP: 'refused',
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 'refused',
  _KEY_SERIALIZATION: 'refused',
  _VALUE_SERIALIZATION: 'refused',
  // CORRUPT_MESSAGE: librdkafka retries it itself, so a delivery that still fails is deterministic;
  // on a fetch it is the broker's data, not ours.
  INVALID_MSG: { produced: 'refused', otherwise: 'other' },

  // A local misuse or a configuration the cluster rejects.
  _INVALID_ARG: 'config',
  _NOT_CONFIGURED: 'config',
  _UNKNOWN_TOPIC: 'config',
  // A record for a partition that does not exist is a mistake; any other call (a watermark or
  // metadata read) gets it while the client's metadata lacks the partition: after a topic was
  // created or while the only broker restarts. A worker stopped on it for good mid-outage.
  _UNKNOWN_PARTITION: { produced: 'config', otherwise: 'retriable' },
  _UNKNOWN_GROUP: 'config',
  _UNKNOWN_BROKER: 'config',
  _UNKNOWN_PROTOCOL: 'config',
  _NOT_IMPLEMENTED: 'config',
  _UNSUPPORTED_FEATURE: 'config',
  _EXISTING_SUBSCRIPTION: 'config',
  _READ_ONLY: 'config',
  _NOENT: 'config',
  _INVALID_TYPE: 'config',
  // A topic that is gone (deleted while the worker runs, or never created): a stop naming it, not a
  // retry until message.timeout.ms. Start-up checks wait out the metadata lag of a new topic.
  UNKNOWN_TOPIC_OR_PART: 'config',
  UNKNOWN_TOPIC_ID: 'config',
  TOPIC_EXCEPTION: 'config',
  OFFSET_METADATA_TOO_LARGE: 'config',
  INCONSISTENT_GROUP_PROTOCOL: 'config',
  INVALID_GROUP_ID: 'config',
  INVALID_SESSION_TIMEOUT: 'config',
  INVALID_COMMIT_OFFSET_SIZE: 'config',
  UNSUPPORTED_SASL_MECHANISM: 'config',
  ILLEGAL_SASL_STATE: 'config',
  UNSUPPORTED_VERSION: 'config',
  INVALID_PARTITIONS: 'config',
  INVALID_REPLICATION_FACTOR: 'config',
  INVALID_REPLICA_ASSIGNMENT: 'config',
  INVALID_CONFIG: 'config',
  INVALID_REQUEST: 'config',
  POLICY_VIOLATION: 'config',
  INVALID_REQUIRED_ACKS: 'config',
  INVALID_TRANSACTION_TIMEOUT: 'config',
  SECURITY_DISABLED: 'config',
  LOG_DIR_NOT_FOUND: 'config',
  DELEGATION_TOKEN_AUTH_DISABLED: 'config',
  DELEGATION_TOKEN_NOT_FOUND: 'config',
  DELEGATION_TOKEN_OWNER_MISMATCH: 'config',
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: 'config',
  INVALID_PRINCIPAL_TYPE: 'config',
  NON_EMPTY_GROUP: 'config',
  GROUP_ID_NOT_FOUND: 'config',
  TOPIC_DELETION_DISABLED: 'config',
  UNSUPPORTED_COMPRESSION_TYPE: 'config',
  GROUP_MAX_SIZE_REACHED: 'config',
  GROUP_SUBSCRIBED_TO_TOPIC: 'config',
  RESOURCE_NOT_FOUND: 'config',
  DUPLICATE_RESOURCE: 'config',
  INCONSISTENT_VOTER_SET: 'config',
  INVALID_UPDATE_VERSION: 'config',
  FEATURE_UPDATE_FAILED: 'config',
  UNSUPPORTED_ASSIGNOR: 'config',

  // A record that failed only because another record of its batch was invalid (KIP-467): resent.
  _INVALID_DIFFERENT_RECORD: 'abortable',
  // Outputs of an aborted transaction: discarded by design (the producer counts them as purged).
  _PURGE_QUEUE: 'abortable',
  _PURGE_INFLIGHT: 'abortable',

  // Transient by nature; retried in place within the API timeout.
  _QUEUE_FULL: 'retriable',
  _WAIT_COORD: 'retriable',
  _WAIT_CACHE: 'retriable',
  _IN_PROGRESS: 'retriable',
  _PREV_IN_PROGRESS: 'retriable',
  _RETRY: 'retriable',
  _INTR: 'retriable',
  _PARTIAL: 'retriable',
  // A call made while an earlier one of the same kind still runs (after a JS-side timeout): the
  // same call again resumes it (librdkafka's transactional API is resumable).
  _CONFLICT: 'retriable',
  // Leadership moving (a restarted broker, a topic created a moment ago): Kafka's own clients retry
  // these. Unflagged, as a metadata read reports them (watermarks at a worker's start), they were
  // `other`, and a worker starting during an election stopped; flags still say fatal or abortable.
  LEADER_NOT_AVAILABLE: 'retriable',
  NOT_LEADER_FOR_PARTITION: 'retriable',

  // Meaning depends on the occurrence: librdkafka's flags say whether to retry, abort or give up.
  _STATE: 'by-flags',
  REPLICA_NOT_AVAILABLE: 'by-flags',
  STALE_CTRL_EPOCH: 'by-flags',
  COORDINATOR_LOAD_IN_PROGRESS: 'by-flags',
  GROUP_LOAD_IN_PROGRESS: 'by-flags',
  COORDINATOR_NOT_AVAILABLE: 'by-flags',
  GROUP_COORDINATOR_NOT_AVAILABLE: 'by-flags',
  NOT_COORDINATOR: 'by-flags',
  NOT_COORDINATOR_FOR_GROUP: 'by-flags',
  NOT_ENOUGH_REPLICAS: 'by-flags',
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 'by-flags',
  _ISR_INSUFF: 'by-flags',
  NOT_CONTROLLER: 'by-flags',
  // Idempotence and transactions: fatal for an idempotent producer, abortable inside a transaction,
  // an epoch bump since KIP-360; librdkafka knows which.
  OUT_OF_ORDER_SEQUENCE_NUMBER: 'by-flags',
  DUPLICATE_SEQUENCE_NUMBER: 'by-flags',
  INVALID_PRODUCER_EPOCH: 'by-flags',
  INVALID_TXN_STATE: 'by-flags',
  INVALID_PRODUCER_ID_MAPPING: 'by-flags',
  UNKNOWN_PRODUCER_ID: 'by-flags',
  CONCURRENT_TRANSACTIONS: 'by-flags',
  TRANSACTION_COORDINATOR_FENCED: 'by-flags',
  OPERATION_NOT_ATTEMPTED: 'by-flags',
  KAFKA_STORAGE_ERROR: 'by-flags',
  REASSIGNMENT_IN_PROGRESS: 'by-flags',
  FETCH_SESSION_ID_NOT_FOUND: 'by-flags',
  INVALID_FETCH_SESSION_EPOCH: 'by-flags',
  LISTENER_NOT_FOUND: 'by-flags',
  FENCED_LEADER_EPOCH: 'by-flags',
  UNKNOWN_LEADER_EPOCH: 'by-flags',
  STALE_BROKER_EPOCH: 'by-flags',
  OFFSET_NOT_AVAILABLE: 'by-flags',
  MEMBER_ID_REQUIRED: 'by-flags',
  PREFERRED_LEADER_NOT_AVAILABLE: 'by-flags',
  ELIGIBLE_LEADERS_NOT_AVAILABLE: 'by-flags',
  ELECTION_NOT_NEEDED: 'by-flags',
  NO_REASSIGNMENT_IN_PROGRESS: 'by-flags',
  UNSTABLE_OFFSET_COMMIT: 'by-flags',
  THROTTLING_QUOTA_EXCEEDED: 'by-flags',

  // Nothing the runtime can decide from the code: rewound, and logged loudly.
  UNKNOWN: 'other',
  _FAIL: 'other',
  _BAD_MSG: 'other',
  _BAD_COMPRESSION: 'other',
  _DESTROY: 'other',
  _FS: 'other',
  _NO_OFFSET: 'other',
  _OUTDATED: 'other',
  _KEY_DESERIALIZATION: 'other',
  _VALUE_DESERIALIZATION: 'other',
  _UNDERFLOW: 'other',
  _APPLICATION: 'other',
  _AUTO_OFFSET_RESET: 'other',
  _LOG_TRUNCATION: 'other',
  OFFSET_OUT_OF_RANGE: 'other',
  TOPIC_ALREADY_EXISTS: 'other',
  UNKNOWN_SUBSCRIPTION_ID: 'other',
  TELEMETRY_TOO_LARGE: 'other',
};

/** The decision for `name` under `operation`, or undefined for a code the table does not know. */
/**
 * Codes whose broker message tells a passing state from a real mistake. KRaft answers a topic
 * creation with INVALID_REPLICATION_FACTOR both when the factor exceeds the brokers (a mistake) and
 * when every broker is fenced for a moment, e.g. right after a paused broker resumes, until its next
 * heartbeat to the controller: only the latter is worth waiting for.
 */
export const MESSAGE_REFINEMENTS: readonly { code: string; pattern: RegExp; kind: ErrorKind }[] = [
  { code: 'INVALID_REPLICATION_FACTOR', pattern: /brokers are currently fenced/i, kind: 'retriable' },
];

export function decisionOf(
  name: string,
  operation: KafkaOperation,
  message = '',
): ErrorKind | 'by-flags' | undefined {
  const refined = MESSAGE_REFINEMENTS.find((r) => r.code === name && r.pattern.test(message));
  if (refined !== undefined) return refined.kind;
  const d = ERROR_TABLE[name];
  if (d === undefined || typeof d === 'string') return d;
  return PRODUCED_OPERATIONS.has(operation) ? d.produced : d.otherwise;
}
