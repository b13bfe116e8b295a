import { classifyKafkaError } from '../../kafka/classify.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { BATCH_FINISHED, type ProcessResult } from '../stage.ts';
import { ProcessingTimeout, StaleBatch, type WorkerContext } from './worker-context.ts';

/**
 * Runs `stage.process` once. If it takes longer than `keepAliveAfterMs`, the assigned partitions are
 * paused and the consumer is polled meanwhile, so rebalance callbacks are served and
 * max.poll.interval is never exceeded; a rebalance aborts the work through `ctx.signal`. Past the
 * processing deadline (on the worker's `Clock`) the work is abandoned as a `ProcessingTimeout`.
 */
/** What a stage call reads of the worker. */
export type StageCallContext = Pick<
  WorkerContext,
  | 'o'
  | 'stage'
  | 'clock'
  | 'log'
  | 'metrics'
  | 'policy'
  | 'epochs'
  | 'session'
  | 'stores'
  | 'inFlight'
  | 'progress'
>;

export async function invokeStage(
  ctx: StageCallContext,
  records: FetchedRecord[],
  epoch: number,
  onConsumerError: (e: unknown) => void,
): Promise<ProcessResult> {
  const controller = ctx.inFlight.begin();
  const consumer = ctx.session.consumer;
  let finished = false;
  let paused = false;
  const keepAlive = (async () => {
    await ctx.clock.sleep(ctx.o.keepAliveAfterMs, controller.signal);
    while (!finished && !controller.signal.aborted) {
      if (!paused) {
        consumer.pause(ctx.epochs.assigned());
        paused = true;
      }
      const extra = await consumer.consume(1, 100).catch((e: unknown) => {
        onConsumerError(classifyKafkaError(e, 'consume'));
        return [];
      });
      ctx.progress.looped(ctx.clock.now());
      // Only a partition assigned meanwhile can deliver; that assignment already made the batch stale.
      if (extra.length > 0)
        controller.abort(new StaleBatch('records arrived from a newly assigned partition'));
    }
  })();
  const started = ctx.clock.now();
  const timeoutMs = ctx.policy.processingTimeoutMs;
  const deadline = (async () => {
    await ctx.clock.sleep(timeoutMs, controller.signal);
    if (controller.signal.aborted) return;
    ctx.metrics.processingTimeouts.inc();
    controller.abort(new ProcessingTimeout(`processing took longer than ${timeoutMs} ms`));
  })();
  try {
    const work = Promise.resolve(
      ctx.stage.process(records, {
        signal: controller.signal,
        log: ctx.log,
        epoch,
        state: (partition) => {
          if (!ctx.stores) throw new Error(`stage ${ctx.stage.name} declares no state stores`);
          return ctx.stores.partitionState(partition);
        },
      }),
    );
    const aborted = new Promise<never>((_, reject) => {
      const abort = () =>
        reject(
          controller.signal.reason instanceof Error ? controller.signal.reason : new StaleBatch('aborted'),
        );
      if (controller.signal.aborted) abort();
      else controller.signal.addEventListener('abort', abort, { once: true });
    });
    // Work that ignores the signal is abandoned, not awaited: its result would be stale anyway.
    work.catch(() => undefined);
    aborted.catch(() => undefined);
    return await Promise.race([work, aborted]);
  } finally {
    finished = true;
    controller.abort(new StaleBatch(BATCH_FINISHED));
    await keepAlive;
    await deadline;
    ctx.inFlight.end();
    ctx.metrics.processSeconds.observe((ctx.clock.now() - started) / 1000);
  }
}
