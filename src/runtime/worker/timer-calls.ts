import type { ProcessResult, StageOutput } from '../stage.ts';
import { checkDeclaredTopics } from './committer.ts';
import type { TransactionRunner } from './transaction-runner.ts';
import { errorText, type WorkerContext } from './worker-context.ts';

/** What timer calls read of the worker. */
export type TimerCallsContext = Pick<
  WorkerContext,
  'stage' | 'clock' | 'log' | 'epochs' | 'stores' | 'lifecycle' | 'inFlight'
>;

/**
 * Calls `onTimer` for every assigned, restored partition whose timer is due, each call in a
 * transaction of its own: its outputs and store changes, no input offsets. A call whose partition
 * was revoked (or is being restored again) or whose epoch changed meanwhile is discarded.
 *
 * With a commit interval, due timers wait while the open span is younger than the interval (so at
 * most that long), then the span commits first: a timer call never shares a transaction with
 * batches, so its partition's staleness and its outputs are judged on their own. Committing the
 * span whenever a timer was due instead cut a collector's spans (a timer every 250 ms on each of
 * three partitions) to a fraction of the interval.
 */
export class TimerCalls {
  constructor(
    private readonly ctx: TimerCallsContext,
    private readonly runner: TransactionRunner,
    private readonly d: {
      /** An error the consumer reported waits for the loop's recovery. */
      pending(): boolean;
      /** Commits a transaction left open across batches and waits for the commit. */
      closeSpan(): Promise<void>;
      /** A transaction spans batches and is not yet due. */
      spanYoung(): boolean;
    },
  ) {}

  async runDue(): Promise<void> {
    const ctx = this.ctx;
    const stores = ctx.stores;
    const stage = ctx.stage;
    const timers = stores?.engine.timers;
    if (!stores || !stage.onTimer || !timers) return;
    const due = stores.engine.dueTimers(ctx.clock.now());
    if (due.length === 0 || this.d.spanYoung()) return;
    await this.d.closeSpan();
    for (const partition of due) {
      if (ctx.lifecycle.stopRequested || this.d.pending()) return;
      const epoch = ctx.epochs.current;
      const now = ctx.clock.now();
      timers.fired(partition, now);
      stores.engine.metrics.timerCalls.inc();
      const controller = ctx.inFlight.begin();
      stores.begin();
      try {
        let result: ProcessResult;
        try {
          result = await stage.onTimer({
            signal: controller.signal,
            log: ctx.log,
            epoch,
            partition,
            now,
            state: stores.partitionState(partition),
          });
        } catch (e) {
          if (!controller.signal.aborted)
            ctx.log.warn(
              { event: 'timer-failed', partition, err: errorText(e) },
              'timer call failed; its changes are dropped',
            );
          continue;
        }
        for (const f of result.failures ?? [])
          ctx.log.warn(
            { event: 'timer-failure', partition, err: errorText(f.error) },
            'timer call reported a failure',
          );
        if (controller.signal.aborted || !this.#stillOurs(epoch, partition)) continue;
        await this.#commit(result.outputs, epoch, partition);
      } finally {
        ctx.inFlight.end();
        stores.aborted();
      }
    }
  }

  #stillOurs(epoch: number, partition: number): boolean {
    return epoch === this.ctx.epochs.current && this.ctx.stores?.engine.isReady(partition) === true;
  }

  async #commit(outputs: StageOutput[], epoch: number, partition: number): Promise<void> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx.stage, outputs);
    const changelog = ctx.stores?.changelogRecords() ?? [];
    if (outputs.length === 0 && changelog.length === 0) return;
    const t0 = ctx.clock.now();
    await this.runner.begin();
    await this.runner.produce(outputs);
    await this.runner.end({
      produced: outputs.length,
      startedAt: t0,
      changelog,
      staleReason: () => (this.#stillOurs(epoch, partition) ? undefined : 'stale'),
    });
  }
}
