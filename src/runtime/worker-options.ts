import type { Logger } from '../observability/logger.ts';
import type { ConsumerPort, RebalanceListener } from '../kafka/consumer.ts';
import type { ConsumerSettings, ProducerSettings } from '../kafka/client-config.ts';
import type { ErrorKind, KafkaError, KafkaOperation } from '../kafka/kafka-error.ts';
import type { ProducerPort } from '../kafka/producer.ts';
import type { AdminPort } from '../kafka/admin.ts';
import type { BackOff } from './backoff.ts';
import type { CommitInterval } from './transaction-span.ts';
import type { Clock } from './clock.ts';
import type { AlertOptions } from './alert-conditions.ts';
import type { RecoveryAction, RecoverySituation, RecoveryStep } from './recovery-plan.ts';
import type { Stage } from './stage.ts';
import type { RecordErrorPolicy } from './record-errors/policy.ts';
import type { AttemptStore } from './delivery-attempts/attempt-store.ts';
import type { StateSettings } from './state/state-engine.ts';

/**
 * Why a worker aborted a transaction: the kind of the Kafka error that made it, or one of the
 * worker's own reasons (a clean stop, a stale batch, outputs Kafka refused, a rerun that failed).
 */
export type AbortReason = ErrorKind | 'shutdown' | 'stale' | 'refused' | 'rerun-failed';

/**
 * Kafka settings of a worker. A program fills them itself, or `workerOptionsFromConfig` (src/app/)
 * resolves them from config.yaml and env.
 */
export interface WorkerKafkaOptions {
  bootstrapServers: string;
  /** Default: the stage's full name. */
  groupId?: string;
  /** Default: `<stage name>-<instance id>`: stable, so a restarted instance fences its zombie. */
  transactionalId?: string;
  groupProtocol: 'classic' | 'consumer';
  assignmentStrategy: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxPollIntervalMs: number;
  transactionTimeoutMs: number;
  /** Highest transaction protocol version (1 or 2); default 2, used where the cluster has it. */
  transactionVersion?: 1 | 2;
  messageTimeoutMs: number;
  /** Bound of every native transactional call (config: transaction_api_timeout_seconds). */
  apiTimeoutMs: number;
  /** At-least-once commits retry transient coordinator errors only this long. */
  commitRetryTimeoutMs: number;
  /** Metadata refresh of both clients: how soon new input partitions are consumed (default 5 s). */
  metadataRefreshIntervalMs?: number;
  consumerOverrides?: Record<string, string | number | boolean>;
  producerOverrides?: Record<string, string | number | boolean>;
}

/**
 * The settings of a worker's group member: the worker's Kafka options, read_committed, earliest
 * when the group has no offset. Every consume-process-produce loop reads its input this way.
 */
export function groupMemberSettings(
  k: WorkerKafkaOptions,
  ids: { clientId: string; groupId: string },
): ConsumerSettings {
  return {
    bootstrapServers: k.bootstrapServers,
    clientId: ids.clientId,
    groupId: ids.groupId,
    groupProtocol: k.groupProtocol,
    assignmentStrategy: k.assignmentStrategy,
    sessionTimeoutMs: k.sessionTimeoutMs,
    heartbeatIntervalMs: k.heartbeatIntervalMs,
    maxPollIntervalMs: k.maxPollIntervalMs,
    isolation: 'read_committed',
    autoOffsetReset: 'earliest',
    ...(k.metadataRefreshIntervalMs !== undefined
      ? { metadataRefreshIntervalMs: k.metadataRefreshIntervalMs }
      : {}),
    overrides: k.consumerOverrides,
  };
}

/** Factories of the Kafka clients; tests wrap them to inject faults at the port on a real broker. */
export interface KafkaClientFactory {
  consumer(
    settings: ConsumerSettings,
    listener: RebalanceListener,
    onError: (err: KafkaError) => void,
    log: Logger,
  ): ConsumerPort;
  producer(settings: ProducerSettings, log: Logger): ProducerPort;
  /** The start-up checks' admin client (input topics exist, retry topics created). Default: `createAdmin`. */
  admin?(bootstrapServers: string, clientId: string): AdminPort;
}

export interface WorkerOptions {
  stage: Stage;
  /** Identifies this instance among the stage's replicas (HOSTNAME, pod name, `0`, ...). */
  instanceId: string;
  /** exactly-once: outputs + offsets in one transaction. at-least-once: side effects, then commit (sinks). */
  mode: 'exactly-once' | 'at-least-once';
  kafka: WorkerKafkaOptions;
  batch: { size: number; timeoutMs: number };
  /**
   * Exactly-once only: lets one transaction span several batches, committed once it is this old or
   * holds this many input records, or at once when the input is caught up (a batch came back short
   * of full or read the input to its end). Absent: one transaction per batch.
   */
  commitInterval?: CommitInterval;
  /** Retry, back-off, dead letters, dead-letter limit, bounded redelivery. Defaults: `defaultRecordErrorPolicy`. */
  recordErrors?: Partial<RecordErrorPolicy>;
  /**
   * Durable delivery attempts: what bounds redelivery (`recordErrors.maxDeliveries`) across crashes,
   * stalls and processing timeouts. Absent: the worker keeps its own `KafkaAttemptStore` on
   * `attemptTopic` of its cluster (started at its first batch, closed when the worker stops). A store
   * given here is started and closed by its creator, so several workers of a process can share one.
   * `false`: none; a record that crashes or stalls the worker every time is then redelivered forever.
   */
  attemptStore?: AttemptStore | false;
  /** Compacted topic of the worker's own attempt store. Default `hamstring.delivery-attempts`. */
  attemptTopic?: string;
  /** While `process` runs longer than this, partitions are paused and Kafka is polled to keep membership. */
  keepAliveAfterMs?: number;
  /** Back-off of the reconnect loop while Kafka is unreachable. */
  reconnectBackOff?: BackOff;
  /** Fatal producer errors (not fences) recovered by a new producer within a minute before stopping. */
  fatalLimit?: number;
  /**
   * Identical errors of kind `other` (same code, operation and message) recovered by a rewind within
   * `windowMs` before the worker stops naming the error. Default: 5 within 60 s.
   */
  otherErrorLimit?: { count: number; windowMs: number };
  alerts?: AlertOptions;
  /**
   * Local copies and changelog topics of a stage's state stores (`runtime.state` in config.yaml).
   * Default: `var/state`, the broker's replication factor and min ISR.
   */
  state?: StateSettings;
  clock?: Clock;
  log?: Logger;
  clients?: KafkaClientFactory;
  /** Called at points where recoveries happen or where a crash or fault is interesting (tests). */
  hooks?: WorkerHooks;
}

/** What a hook learns about the batch being committed. */
export interface CommitInfo {
  epoch: number;
  records: number;
  outputs: number;
  deadLetters: number;
}

/** Where the worker hooks in: observers (batch events, tests). A throwing hook is logged, never fatal. */
export interface WorkerHooks {
  /** A transaction was aborted; its outputs are discarded. */
  onAbort?(info: { reason: AbortReason; epoch: number; discardedOutputs: number }): void;
  /**
   * A recovery ran: error kind, librdkafka code, the operation that failed, the planned action and
   * its steps; `situation` is `abort` when the plan was for a failed abort; `reason` is set when the
   * plan stops the worker.
   */
  onRecovery?(info: {
    kind: ErrorKind;
    /** librdkafka's code name, e.g. `_TRANSPORT`. */
    code: string;
    /** The client call that failed (`send-offsets`, `commit-transaction`, `produce`, ...). */
    operation: KafkaOperation;
    action: RecoveryAction['type'];
    epoch: number;
    steps?: readonly RecoveryStep[];
    situation?: RecoverySituation;
    reason?: string;
  }): void;
  /** A batch was discarded as stale before any output transaction. */
  onStale?(info: { reason: string; epoch: number; currentEpoch: number; records: number }): void;
  /** Outputs are produced, offsets not yet sent. */
  beforeSendOffsets?(info: CommitInfo): Promise<void> | void;
  /** Offsets sent (or, at least once, outputs flushed), commit not yet called. */
  beforeCommit?(info: CommitInfo): Promise<void> | void;
  /** The commit returned. It may run while the next batch is fetched, always before that batch is processed. */
  afterCommit?(info: CommitInfo): Promise<void> | void;
}
