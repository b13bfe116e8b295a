/**
 * The runtime's public surface: what the application layer, users' stages and the package entry point
 * import. Everything else under src/runtime/ is internal and may move.
 */
export { TransactionalWorker } from './worker/transactional-worker.ts';
export type { WorkerState, WorkerStatus } from './worker/transactional-worker.ts';
export type {
  WorkerOptions,
  WorkerKafkaOptions,
  WorkerHooks,
  CommitInfo,
  KafkaClientFactory,
  AbortReason,
} from './worker-options.ts';
export { hostWorkers } from './worker-host.ts';
export type { WorkerHost } from './worker-host.ts';
export { KafkaAttemptStore } from './delivery-attempts/kafka-attempt-store.ts';
export type { KafkaAttemptStoreOptions } from './delivery-attempts/kafka-attempt-store.ts';
export type { AttemptStore, DeliveryMarker } from './delivery-attempts/attempt-store.ts';
export { InMemoryAttemptStore } from './delivery-attempts/in-memory-attempt-store.ts';
export { startHealthServer } from './health-server.ts';
export { DEFAULT_HTTP_LIMITS, httpLimitsFromConfig } from './http-guard.ts';
export type { HttpLimits } from './http-guard.ts';
export type { HealthServer, HealthServerOptions } from './health-server.ts';
export { ThreadPool } from './thread-pool.ts';
export type { ThreadPoolOptions } from './thread-pool.ts';
export { RecordError, NonRetryableError, DecodeError, BATCH_FINISHED } from './stage.ts';
export type {
  Stage,
  StageRecord,
  StageOutput,
  StageContext,
  TimerContext,
  ProcessResult,
  RecordFailure,
  RecordPosition,
} from './stage.ts';
export type {
  Codec,
  KeyValueStore,
  PartitionState,
  StoreDeclaration,
  TimerDeclaration,
} from './state/contract.ts';
export { exponentialBackOff, fixedBackOff } from './backoff.ts';
export type { BackOff } from './backoff.ts';
export { DLT_HEADERS } from './record-errors/dead-letter.ts';
export { defaultRecordErrorPolicy } from './record-errors/policy.ts';
export type { RecordErrorPolicy } from './record-errors/policy.ts';
export { jsonCodec, bytesCodec } from './state/codecs.ts';
export { systemClock } from './clock.ts';
export type { Clock } from './clock.ts';
