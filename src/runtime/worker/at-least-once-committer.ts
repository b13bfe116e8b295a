import type { FetchedRecord } from '../../kafka/records.ts';
import { nextOffsets } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import { checkDeclaredTopics, commitInfo, recordCommit, type Committer } from './committer.ts';
import type { WorkerContext } from './worker-context.ts';

/** What the committer reads of the worker. */
export type AtLeastOnceContext = Pick<
  WorkerContext,
  | 'o'
  | 'stage'
  | 'clock'
  | 'session'
  | 'hooks'
  | 'alerts'
  | 'metrics'
  | 'lifecycle'
  | 'progress'
  | 'committedFloor'
>;

/**
 * For sinks: produce and flush the outputs and wait for their delivery reports (a delivery failure
 * throws before any offset moves), then commit the input offsets outside any transaction. A crash in
 * between redelivers the batch.
 */
export class AtLeastOnceCommitter implements Committer {
  constructor(private readonly ctx: AtLeastOnceContext) {}

  async commit(
    records: FetchedRecord[],
    epoch: number,
    stageOutputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx.stage, stageOutputs);
    const info = commitInfo(epoch, records, stageOutputs, deadLetters);
    const outputs = [...stageOutputs, ...deadLetters];
    const s = ctx.session;
    const t0 = ctx.clock.now();
    for (const o of outputs) await s.producer.produce(o);
    if (outputs.length > 0) {
      // flush() resolves once every report is in the tally: read before, it could miss a failed
      // record, and that record's offset would be committed (the record lost).
      await s.producer.flush(ctx.o.kafka.messageTimeoutMs);
      const t = s.producer.tally();
      if (t.firstError) throw t.firstError;
    }
    await ctx.hooks.beforeCommit?.(info);
    const offsets = nextOffsets(records);
    await s.retryInPlace(
      'commit-offsets',
      () => s.consumer.commitOffsets(offsets),
      ctx.o.kafka.commitRetryTimeoutMs,
    );
    recordCommit(ctx, outputs.length, t0, offsets);
    await ctx.hooks.afterCommit?.(info);
    return true;
  }
}
