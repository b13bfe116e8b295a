import { Registry } from 'prom-client';
import { stuckNativeCalls } from '../kafka/abandoned-clients.ts';
import type { Logger } from '../observability/logger.ts';
import { startHealthServer, type HealthTarget } from './health-server.ts';
import type { HttpLimits } from './http-guard.ts';
import type { TransactionalWorker } from './worker/transactional-worker.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

export interface WorkerHost {
  /** The health endpoint's port (when enabled). */
  readonly healthPort: number | undefined;
  /** Resolves when every worker has stopped; true when one of them failed. */
  readonly done: Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Runs workers as a process: starts them, serves /livez, /readyz and /metrics, and shuts down
 * gracefully on SIGTERM or SIGINT (no new fetches, the open transaction finished or aborted within
 * its timeout, the group left, clients closed). A second signal exits at once.
 */
export async function hostWorkers(args: {
  workers: TransactionalWorker[];
  log: Logger;
  /** Serves /livez, /readyz and /metrics on this port; absent or 0: no health server. */
  healthPort?: number;
  /** Default 127.0.0.1; 0.0.0.0 in a container, so the orchestrator's probes reach it (needs `accessToken`). */
  healthHost?: string;
  /** The config key or option that set `healthHost`, named when the bind is refused. */
  healthHostKey?: string;
  /** Required on every health request when set (see http-guard.ts). */
  accessToken?: string;
  /** The health server's request limits (config `endpoints.limits`); default DEFAULT_HTTP_LIMITS. */
  httpLimits?: HttpLimits;
  /**
   * false: /metrics exposes no series, neither the workers' nor the process's (config
   * `runtime.metrics`); the probes are served all the same. Default true.
   */
  metrics?: boolean;
  signals?: NodeJS.Signals[];
}): Promise<WorkerHost> {
  const { workers, log } = args;
  const targets: () => readonly HealthTarget[] =
    args.metrics === false ? () => workers.map(withoutMetrics) : () => workers;
  const health =
    args.healthPort !== undefined && args.healthPort > 0
      ? await startHealthServer({
          port: args.healthPort,
          workers: targets,
          processMetrics: args.metrics !== false,
          ...(args.healthHost !== undefined ? { host: args.healthHost } : {}),
          ...(args.healthHostKey !== undefined ? { hostKey: args.healthHostKey } : {}),
          ...(args.accessToken !== undefined ? { accessToken: args.accessToken } : {}),
          ...(args.httpLimits !== undefined ? { limits: args.httpLimits } : {}),
        })
      : undefined;
  let healthClosed: Promise<void> | undefined;
  const closeHealth = () => (healthClosed ??= health?.close() ?? Promise.resolve());
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info({ event: 'shutdown' }, 'stopping workers');
      await Promise.all(workers.map((w) => w.stop()));
      await closeHealth();
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(130);
    }
    log.info({ signal }, 'signal received: graceful shutdown');
    void stop();
  };
  const signals = args.signals ?? ['SIGTERM', 'SIGINT'];
  for (const s of signals) process.on(s, onSignal);
  try {
    await Promise.all(workers.map((w) => w.start()));
  } catch (e) {
    // A worker that cannot start leaves no handler, server or other worker behind.
    for (const s of signals) process.off(s, onSignal);
    await Promise.allSettled(workers.map((w) => w.stop()));
    await closeHealth();
    throw e;
  }
  const done = (async () => {
    await Promise.all(workers.map((w) => w.done()));
    for (const s of signals) process.off(s, onSignal);
    await closeHealth();
    const stuck = stuckNativeCalls();
    // libuv joins its pool threads at exit, process.exit included: a thread stuck in librdkafka
    // holds the process however it ends. Say so, rather than leave a silent hang to the supervisor.
    if (stuck > 0)
      log.error(
        { event: 'native-calls-stuck', stuck },
        `${stuck} librdkafka call(s) never returned; their pool threads keep this process from exiting until it is killed`,
      );
    return workers.some((w) => w.status().state === 'failed');
  })();
  return { healthPort: health?.port, done, stop };
}

const NO_SERIES = new Registry();

/** The worker as the probes see it, with an empty registry in place of its metrics. */
function withoutMetrics(worker: TransactionalWorker): HealthTarget {
  // The health server reads only `registry` of a target's metrics.
  return { status: () => worker.status(), metrics: { registry: NO_SERIES } as WorkerMetrics };
}
