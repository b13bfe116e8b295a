import { bootstrapServers, configWarnings, unknownStageKeys, type HamstringConfig } from '../config/index.ts';
import { threadPoolSize } from '../kafka/abandoned-clients.ts';
import { endpointAccessToken } from '../config/endpoint-access.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import {
  hostWorkers,
  httpLimitsFromConfig,
  KafkaAttemptStore,
  TransactionalWorker,
  type AttemptStore,
  type KafkaClientFactory,
  type Stage,
  type WorkerHooks,
} from '../runtime/index.ts';
import { logLevelsFromConfig } from './log-levels.ts';
import { workerOptionsFromConfig } from './worker-config.ts';

/**
 * libuv threads below which a process is a few stuck librdkafka calls away from a red liveness
 * (it turns red when stuck calls hold half the pool); `bin/hamstring` makes sure every command runs with 16.
 */
export const RECOMMENDED_THREAD_POOL_SIZE = 16;

/** What {@link runStages} needs besides the config and the stages; every field has a default. */
export interface RunStagesOptions {
  config: HamstringConfig;
  /** Each stage runs in its own exactly-once worker; they share the process's health server. */
  stages: readonly Stage[];
  /** Stages (by name) that run at least once (sinks with side effects outside Kafka); the rest exactly once. */
  atLeastOnce?: ReadonlySet<string>;
  /** Default `process.env`: HAMSTRING_LOG_LEVEL, HAMSTRING_INSTANCE_ID, batch overrides, UV_THREADPOOL_SIZE, HAMSTRING_ACCESS_TOKEN(_FILE). */
  env?: NodeJS.ProcessEnv;
  /** Default: a JSON logger on stdout at the configured base level. */
  log?: Logger;
  /** Signals that stop the workers gracefully (a second one exits at once). Default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
  /** Address of the health server (`--health-host`); default `runtime.health_host` (127.0.0.1). */
  healthHost?: string;
  /** Test seams: the Kafka clients and the worker hooks. */
  clients?: KafkaClientFactory;
  hooks?: WorkerHooks;
}

/** Stages running in this process. */
export interface RunningStages {
  readonly workers: readonly TransactionalWorker[];
  /** The port the health server bound; undefined when `runtime.health_port` is 0. */
  readonly healthPort: number | undefined;
  /** Resolves when every worker has stopped (signal, `stop()` or failure); true when one failed. */
  readonly done: Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Turns a loaded config and stages into running workers with everything the config asks for:
 * - batch, Kafka client and record error settings per stage (`workerOptionsFromConfig`);
 * - log levels from `logging.base.debug`, `logging.modules.<full stage name>.debug` and HAMSTRING_LOG_LEVEL;
 * - the delivery-attempt store (bounded redelivery across crashes) unless
 *   `environment.record_errors.track_delivery_attempts` is false, shared by the workers;
 * - /livez, /readyz and /metrics on `runtime.health_port` (0: none), /metrics empty unless `runtime.metrics`;
 * - graceful shutdown on SIGTERM/SIGINT.
 * A libuv pool smaller than {@link RECOMMENDED_THREAD_POOL_SIZE} is reported at warn: it can only be
 * sized in the environment the process starts with (`bin/hamstring` sets it before it execs node).
 * Resolves once every worker has started.
 */
export async function runStages(options: RunStagesOptions): Promise<RunningStages> {
  const { config, stages } = options;
  if (stages.length === 0) throw new Error('runStages: no stage to run');
  const names = stages.map((s) => s.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new Error(`runStages: stage ${twice} is given twice`);
  const env = options.env ?? process.env;
  const levels = logLevelsFromConfig(config, env);
  const log = options.log ?? createLogger({}, 1, levels.base);

  const pool = threadPoolSize(env);
  if (pool < RECOMMENDED_THREAD_POOL_SIZE)
    log.warn(
      { event: 'thread-pool', size: pool, recommended: RECOMMENDED_THREAD_POOL_SIZE },
      `libuv thread pool of ${pool}: liveness turns red once stuck librdkafka calls hold half of it; ` +
        `start the process with UV_THREADPOOL_SIZE=${RECOMMENDED_THREAD_POOL_SIZE} (hamstring run does)`,
    );
  for (const warning of configWarnings(config))
    log.warn({ event: 'config-compat', path: warning.path }, `config: ${warning.path}: ${warning.message}`);
  for (const key of unknownStageKeys(config, stages))
    log.warn(
      { event: 'config-unknown-stage', path: key.path },
      `config: ${key.path} names no built-in stage and no stage of this process` +
        (key.suggestion !== undefined ? ` (did you mean "${key.suggestion}"?)` : ''),
    );

  const re = config.environment.record_errors;
  const attemptStore: AttemptStore | undefined = re.track_delivery_attempts
    ? new KafkaAttemptStore({
        bootstrapServers: bootstrapServers(config),
        topic: re.delivery_attempts_topic,
        // Its reader's group id derives from this: under a stage's name it is among the groups that
        // stage's ACL plan lets it describe (stageAcls), as the worker's own store's is.
        clientId: `${stages[0]?.name ?? 'hamstring'}-${process.pid}-attempts`,
        log,
      })
    : undefined;
  try {
    await attemptStore?.start();
  } catch (e) {
    throw new Error(
      `delivery-attempt store (topic ${re.delivery_attempts_topic} on ${bootstrapServers(config)}) did not start: ` +
        `${e instanceof Error ? e.message : String(e)}; environment.record_errors.track_delivery_attempts: false runs without bounded redelivery`,
      { cause: e },
    );
  }
  const workers = stages.map(
    (stage) =>
      new TransactionalWorker({
        ...workerOptionsFromConfig({
          config,
          stage,
          env,
          mode: options.atLeastOnce?.has(stage.name) ? 'at-least-once' : 'exactly-once',
        }),
        // The worker binds its stage and instance to every line itself.
        log: log.child({}, { level: levels.stage(stage.name) }),
        ...(attemptStore ? { attemptStore } : {}),
        ...(options.clients ? { clients: options.clients } : {}),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      }),
  );
  let host;
  try {
    const accessToken = endpointAccessToken(config.endpoints, env);
    host = await hostWorkers({
      workers,
      log,
      healthPort: config.runtime.health_port,
      metrics: config.runtime.metrics,
      healthHost: options.healthHost ?? config.runtime.health_host,
      healthHostKey: options.healthHost !== undefined ? '--health-host' : 'runtime.health_host',
      ...(accessToken !== undefined ? { accessToken } : {}),
      httpLimits: httpLimitsFromConfig(config.endpoints),
      ...(options.signals ? { signals: options.signals } : {}),
    });
  } catch (e) {
    await attemptStore?.close();
    throw e;
  }
  // The store outlives the workers: each writes its markers until it has stopped.
  const done = host.done.finally(() => attemptStore?.close());
  log.info(
    {
      event: 'stages-running',
      stages: names,
      instance: workers[0]?.status().instanceId,
      healthPort: host.healthPort,
      deliveryAttempts: attemptStore !== undefined,
      threadPool: pool,
    },
    `running ${names.join(', ')}`,
  );
  return {
    workers,
    healthPort: host.healthPort,
    done,
    stop: async () => {
      await host.stop();
      await done;
    },
  };
}
