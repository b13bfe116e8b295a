import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';

/**
 * The runtime's own worker metrics for a few stages, moving as running workers move them: records
 * consumed and produced, commits, an occasional abort and recovery, lag. One stage holds the
 * `aborts_while_lag_grows` condition so the pages show an active alert condition.
 */
export class LiveWorkerMetrics {
  readonly workers: WorkerMetrics[];
  readonly #timer: NodeJS.Timeout;
  #tick = 0;

  constructor(stages: readonly string[], intervalMs = 100) {
    this.workers = stages.map((stage) => new WorkerMetrics({ stage, instance: `${stage}-1` }));
    for (const w of this.workers) {
      w.up.set(1);
      for (const c of [
        'max_poll_exceeded_or_unknown_member',
        'repeated_recovery_after_revoke',
        'aborts_while_lag_grows',
        'no_commit_while_input_arrives',
      ])
        w.alert.set({ condition: c }, 0);
    }
    this.workers.at(-1)?.alert.set({ condition: 'aborts_while_lag_grows' }, 1);
    this.#timer = setInterval(() => this.step(), intervalMs);
  }

  private step(): void {
    this.#tick += 1;
    this.workers.forEach((w, i) => {
      const records = 20 - i * 3;
      w.records.inc({ direction: 'in' }, records);
      w.records.inc({ direction: 'out' }, records);
      w.commits.inc();
      w.lag.set(((this.#tick * (i + 1)) % 40) + i * 10);
      if (this.#tick % 15 === i) w.aborts.inc({ reason: 'membership' });
      if (this.#tick % 25 === i) w.recoveries.inc({ kind: 'transport', action: 'reconnect' });
    });
  }

  /** Sources for `startDashboard`: each worker's registry. */
  sources(): { metrics(): Promise<string> }[] {
    return this.workers.map((w) => w.registry);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
