import type { ChangelogReader } from '../../kafka/changelog-reader.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../clock.ts';
import type { LocalCopy } from './local-copy.ts';
import { restorePartitions, type Restored } from './restore.ts';
import type { StateMetrics } from './state-metrics.ts';

interface RestoreTask {
  partitions: number[];
  controller: AbortController;
  done: Promise<void>;
}

const RESTORE_RETRY_MS = 1_000;

export interface RestoreTasksOptions {
  /** Names the reader's client: `<clientPrefix>-restore`. */
  clientPrefix: string;
  changelogs: () => ReadonlyMap<string, string>;
  local: () => LocalCopy;
  openReader: (clientId: string) => Promise<ChangelogReader>;
  metrics: StateMetrics;
  clock: Clock;
  log: Logger;
}

/**
 * The restores under way: one task per assignment, retried until it succeeds or none of its
 * partitions is wanted any more. A partition cancelled and assigned again waits for the cancelled
 * task's local writes before its new restore reads the local copy.
 */
export class RestoreTasks {
  readonly #restoring = new Map<number, RestoreTask>();
  readonly #tasks = new Set<RestoreTask>();
  #closed = false;

  constructor(private readonly o: RestoreTasksOptions) {}

  /** Whether `partition` is being restored. */
  has(partition: number): boolean {
    return this.#restoring.has(partition);
  }

  /** Partitions being restored. */
  partitions(): number[] {
    return [...this.#restoring.keys()];
  }

  /**
   * Restores `partitions` (none of them restoring already). `done` gets the result and the
   * partitions still wanted, which no longer count as restoring by then.
   */
  start(partitions: number[], done: (restored: Restored, live: number[]) => void): void {
    const before = [...this.#tasks]
      .filter((t) => t.partitions.some((p) => partitions.includes(p)))
      .map((t) => t.done);
    const task: RestoreTask = { partitions, controller: new AbortController(), done: Promise.resolve() };
    for (const p of partitions) this.#restoring.set(p, task);
    this.#tasks.add(task);
    this.o.metrics.restoring.set(this.#restoring.size);
    task.done = (async () => {
      // A restore of the same partitions that is being cancelled must finish its local writes first.
      await Promise.all(before);
      const restored = await this.#withRetries(task);
      const live = task.partitions.filter((p) => this.#restoring.get(p) === task);
      if (!restored) return;
      for (const p of live) this.#restoring.delete(p);
      done(restored, live);
    })().finally(() => {
      this.#tasks.delete(task);
      this.o.metrics.restoring.set(this.#restoring.size);
    });
  }

  /** Stops restoring `partitions`; a task none of whose partitions is wanted any more is aborted. */
  cancel(partitions: readonly number[]): void {
    for (const p of partitions) {
      const task = this.#restoring.get(p);
      this.#restoring.delete(p);
      if (task && !task.partitions.some((q) => this.#restoring.get(q) === task)) task.controller.abort();
    }
    this.o.metrics.restoring.set(this.#restoring.size);
  }

  /** Resolves when every restore started so far has ended. */
  async settled(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks].map((t) => t.done));
  }

  /** Cancels every restore and waits for them to end. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#tasks) t.controller.abort();
    await Promise.allSettled([...this.#tasks].map((t) => t.done));
  }

  async #withRetries(task: RestoreTask): Promise<Restored | undefined> {
    const o = this.o;
    for (;;) {
      const live = task.partitions.filter((p) => this.#restoring.get(p) === task);
      if (live.length === 0 || task.controller.signal.aborted || this.#closed) return undefined;
      try {
        const reader = await o.openReader(`${o.clientPrefix}-restore`);
        try {
          return await restorePartitions({
            partitions: live,
            changelogs: o.changelogs(),
            local: o.local(),
            reader,
            metrics: o.metrics,
            clock: o.clock,
            log: o.log,
            signal: task.controller.signal,
          });
        } finally {
          await reader.close();
        }
      } catch (e) {
        if (task.controller.signal.aborted || this.#closed) return undefined;
        o.log.warn(
          { event: 'restore-failed', partitions: live, err: String(e) },
          'state: restore failed; retrying',
        );
        await o.clock.sleep(RESTORE_RETRY_MS, task.controller.signal);
      }
    }
  }
}
