import type { Logger } from '../observability/logger.ts';
import { startHealthServer } from './health-server.ts';
import type { TransactionalWorker } from './worker/transactional-worker.ts';

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
  healthPort?: number;
  signals?: NodeJS.Signals[];
}): Promise<WorkerHost> {
  const { workers, log } = args;
  const health =
    args.healthPort !== undefined && args.healthPort > 0
      ? await startHealthServer({ port: args.healthPort, workers: () => workers })
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
  await Promise.all(workers.map((w) => w.start()));
  const done = (async () => {
    await Promise.all(workers.map((w) => w.done()));
    for (const s of signals) process.off(s, onSignal);
    await closeHealth();
    return workers.some((w) => w.status().state === 'failed');
  })();
  return { healthPort: health?.port, done, stop };
}
