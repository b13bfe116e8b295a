import { hostname } from 'node:os';
import {
  bootstrapServers,
  resolveBatchSettings,
  resolveCommitInterval,
  type HamstringConfig,
} from '../config/index.ts';
import type { BackOffConfig } from '../config/record-errors-schema.ts';
import {
  exponentialBackOff,
  fixedBackOff,
  type BackOff,
  type RecordErrorPolicy,
  type Stage,
  type WorkerKafkaOptions,
  type WorkerOptions,
} from '../runtime/index.ts';

export function backOffFromConfig(c: BackOffConfig): BackOff {
  if (c.type === 'fixed') return fixedBackOff(c.interval_ms, c.max_attempts);
  return exponentialBackOff({
    initialMs: c.initial_ms,
    multiplier: c.multiplier,
    maxIntervalMs: c.max_interval_ms,
    maxAttempts: c.max_attempts,
    jitter: c.jitter,
    ...(c.max_elapsed_ms !== undefined ? { maxElapsedMs: c.max_elapsed_ms } : {}),
  });
}

/** The record error policy of a stage: global settings, then its short-name entry, then its full-name entry. */
export function recordErrorPolicyFromConfig(
  config: HamstringConfig,
  stage: Pick<Stage, 'name' | 'shortName'>,
): RecordErrorPolicy {
  const re = config.environment.record_errors;
  const o = { ...(stage.shortName ? re.stages[stage.shortName] : undefined), ...re.stages[stage.name] };
  const dlt = o.dead_letter_topic;
  const retryTopics = o.retry_topics ?? re.retry_topics;
  return {
    backOff: backOffFromConfig(o.backoff ?? re.backoff),
    nonRetryableKinds: o.non_retryable_kinds ?? re.non_retryable_kinds,
    deadLetterTopic: dlt !== undefined ? () => dlt : (topic) => `${topic}${re.dead_letter_suffix}`,
    deadLetterLimit: {
      maxShare: re.dead_letter_limit.max_share,
      window: re.dead_letter_limit.window,
      maxConsecutive: re.dead_letter_limit.max_consecutive,
    },
    maxDeliveries: o.max_deliveries ?? re.max_deliveries,
    processingTimeoutMs: o.processing_timeout_ms ?? re.processing_timeout_ms,
    ...(retryTopics ? { retryTopics: { delaysMs: retryTopics.delays_ms } } : {}),
    deadLetters: o.dead_letters ?? re.dead_letters,
    createTopics: re.create_topics,
    ...(re.topic_replication_factor !== undefined
      ? { topicReplicationFactor: re.topic_replication_factor }
      : {}),
  };
}

/**
 * The process's identity among a stage's replicas: `runtime.instance_id`, then HAMSTRING_INSTANCE_ID,
 * then the host name (a pod name). Every worker and the monitoring agent take it from here.
 */
export function instanceIdFrom(config: HamstringConfig, env: NodeJS.ProcessEnv = process.env): string {
  return config.runtime.instance_id ?? env.HAMSTRING_INSTANCE_ID ?? hostname();
}

/**
 * The Kafka client settings of a worker from config.yaml (env overrides already applied by
 * loadConfig); `over` wins. The one place they are read, for stage workers and the monitoring agent.
 */
export function kafkaOptionsFromConfig(
  config: HamstringConfig,
  over: Partial<WorkerKafkaOptions> = {},
): WorkerKafkaOptions {
  const k = config.environment;
  return {
    bootstrapServers: bootstrapServers(config),
    groupProtocol: k.kafka_consumer.group_protocol,
    assignmentStrategy: k.kafka_consumer.partition_assignment_strategy,
    sessionTimeoutMs: k.kafka_consumer.session_timeout_ms,
    heartbeatIntervalMs: k.kafka_consumer.heartbeat_interval_ms,
    maxPollIntervalMs: k.kafka_consumer.max_poll_interval_ms,
    metadataRefreshIntervalMs: k.kafka_consumer.metadata_refresh_interval_ms,
    transactionTimeoutMs: k.kafka_producer.transaction_timeout_ms,
    transactionVersion: k.kafka_producer.transaction_version,
    messageTimeoutMs: k.kafka_producer.message_timeout_ms,
    apiTimeoutMs: Math.round(k.kafka_producer.transaction_api_timeout_seconds * 1000),
    commitRetryTimeoutMs: Math.round(k.kafka_consumer.commit_retry_timeout_seconds * 1000),
    ...over,
  };
}

/**
 * Everything a TransactionalWorker needs, resolved from config.yaml and the environment in one place:
 * Kafka client settings with their env overrides (already applied by loadConfig), the batch settings
 * in the documented resolution order, the stage's record error policy and its delivery-attempt topic
 * (`attemptStore: false` only when `record_errors.track_delivery_attempts` is false). The runtime
 * itself takes plain `WorkerOptions`; this is the pipeline's config shape mapped onto them.
 */
export function workerOptionsFromConfig(args: {
  config: HamstringConfig;
  stage: Stage;
  env?: NodeJS.ProcessEnv;
  mode?: WorkerOptions['mode'];
  explicitBatch?: { maxMessages?: number; timeoutMs?: number };
}): Omit<WorkerOptions, 'log' | 'clients' | 'hooks' | 'clock'> {
  const { config, stage } = args;
  const env = args.env ?? process.env;
  const batch = resolveBatchSettings({
    config,
    env,
    stage: { full: stage.name, ...(stage.shortName ? { short: stage.shortName } : {}) },
    topics: [...stage.inputTopics],
    ...(args.explicitBatch ? { explicit: args.explicitBatch } : {}),
  });
  const interval = resolveCommitInterval(config, { short: stage.shortName ?? stage.name, full: stage.name });
  return {
    stage,
    instanceId: instanceIdFrom(config, env),
    mode: args.mode ?? 'exactly-once',
    kafka: kafkaOptionsFromConfig(config),
    batch: { size: batch.size, timeoutMs: batch.timeoutMs },
    ...(interval ? { commitInterval: withoutSource(interval) } : {}),
    recordErrors: recordErrorPolicyFromConfig(config, stage),
    ...(config.environment.record_errors.track_delivery_attempts
      ? { attemptTopic: config.environment.record_errors.delivery_attempts_topic }
      : { attemptStore: false }),
    state: {
      dir: config.runtime.state.dir,
      replicationFactor: config.runtime.state.changelog_replication_factor,
      ...(config.runtime.state.changelog_min_insync_replicas !== undefined
        ? { minInsyncReplicas: config.runtime.state.changelog_min_insync_replicas }
        : {}),
    },
  };
}

function withoutSource<T extends { source: string }>(settings: T): Omit<T, 'source'> {
  const { source: _source, ...rest } = settings;
  return rest;
}
