import type { FetchedRecord } from '../../kafka/records.ts';
import { nextOffsets, partitionsOf } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import { checkDeclaredTopics, commitInfo, recordCommit, type Committer } from './committer.ts';
import type { WorkerContext } from './worker-context.ts';

/**
 * One transaction per batch: outputs, dead letters and input offsets commit together or not at all.
 * Transactional calls retry in place within the API timeout; anything else is thrown to the loop,
 * whose recovery plan aborts the transaction.
 */
export class ExactlyOnceCommitter implements Committer {
  constructor(
    private readonly ctx: WorkerContext,
    private readonly stale: {
      abort(reason: string): Promise<void>;
      discard(records: FetchedRecord[], epoch: number, reason: string): Promise<void>;
    },
  ) {}

  async commit(
    records: FetchedRecord[],
    epoch: number,
    outputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx, outputs);
    const info = commitInfo(epoch, records, outputs, deadLetters);
    const s = ctx.session;
    const t0 = ctx.clock.now();
    await s.retryInPlace('begin-transaction', () => s.producer.beginTransaction());
    ctx.txnOpen = true;
    for (const o of outputs) await s.producer.produce(o);
    for (const d of deadLetters) await s.producer.produce(d);
    for (const c of ctx.stores?.changelogRecords() ?? []) await s.producer.produce(c);
    await ctx.hooks.beforeSendOffsets?.(info);
    // Last check before the offsets bind to this generation: a revoke may have arrived meanwhile.
    const stale = ctx.epochs.staleReason(epoch, partitionsOf(records));
    if (stale !== undefined) {
      await this.stale.abort('stale');
      await this.stale.discard(records, epoch, stale);
      return false;
    }
    await s.retryInPlace('send-offsets', () => s.producer.sendOffsets(nextOffsets(records), s.consumer));
    await ctx.hooks.beforeCommit?.(info);
    ctx.stores?.committing();
    await s.retryInPlace('commit-transaction', () => s.producer.commitTransaction());
    ctx.txnOpen = false;
    ctx.stores?.committed(s.producer.deliveredOffsets());
    recordCommit(ctx, outputs.length + deadLetters.length, t0);
    await ctx.hooks.afterCommit?.(info);
    return true;
  }
}
