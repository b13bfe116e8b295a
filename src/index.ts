/**
 * HAMSTRING's package entry point: what a user needs to write a stage and run it. The sources are
 * TypeScript run through tsx (`node --import tsx`, or `hamstring run`), so this file is the entry as it is.
 */
export { runStages, RECOMMENDED_THREAD_POOL_SIZE } from './app/run-stages.ts';
export type { RunStagesOptions, RunningStages } from './app/run-stages.ts';
export { loadStage } from './app/load-stage.ts';
export {
  instanceIdFrom,
  kafkaOptionsFromConfig,
  recordErrorPolicyFromConfig,
  workerOptionsFromConfig,
} from './app/worker-config.ts';
export type { StageFactory } from './app/builtin-stages.ts';
export { logLevelsFromConfig } from './app/log-levels.ts';
export type { LogLevel, LogLevels } from './app/log-levels.ts';
export { startMonitoringAgent } from './app/monitoring-agent.ts';
export type { MonitoringAgent, MonitoringAgentOptions } from './app/monitoring-agent.ts';
export { replayDeadLetters } from './app/dlt-replay.ts';
export type { ReplayOptions, ReplaySummary } from './app/dlt-replay.ts';
export { monitoringEvent } from './monitoring/events.ts';
export { HamstringError } from './errors/hamstring-error.ts';

export {
  CONFIG_PATH_ENV,
  ConfigError,
  loadConfig,
  resolveBatchSettings,
  validateConfig,
} from './config/index.ts';
export type { BatchSettings, ConfigIssue, HamstringConfig, LoadConfigOptions } from './config/index.ts';

export {
  BATCH_FINISHED,
  DecodeError,
  hostWorkers,
  KafkaAttemptStore,
  NonRetryableError,
  RecordError,
  startHealthServer,
  systemClock,
  ThreadPool,
  TransactionalWorker,
} from './runtime/index.ts';
export type {
  AttemptStore,
  Clock,
  Codec,
  KeyValueStore,
  PartitionState,
  ProcessResult,
  RecordFailure,
  RecordPosition,
  Stage,
  StageContext,
  StageOutput,
  StageRecord,
  StoreDeclaration,
  ThreadPoolOptions,
  TimerContext,
  TimerDeclaration,
  WorkerHooks,
  WorkerHost,
  WorkerKafkaOptions,
  WorkerOptions,
  WorkerState,
  WorkerStatus,
} from './runtime/index.ts';
export type { Logger } from './observability/logger.ts';
