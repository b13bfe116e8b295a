import { classifyKafkaError } from '../../kafka/classify.ts';
import { code } from '../../kafka/error-codes.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { nextOffsets } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import { checkDeclaredTopics, commitInfo, recordCommit, type Committer } from './committer.ts';
import type { WorkerContext } from './worker-context.ts';

/**
 * For sinks: produce and flush the outputs and wait for their delivery reports (a delivery failure
 * throws before any offset moves), then commit the input offsets outside any transaction. A crash in
 * between redelivers the batch.
 */
export class AtLeastOnceCommitter implements Committer {
  constructor(private readonly ctx: WorkerContext) {}

  async commit(
    records: FetchedRecord[],
    epoch: number,
    stageOutputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx, stageOutputs);
    const info = commitInfo(epoch, records, stageOutputs, deadLetters);
    const outputs = [...stageOutputs, ...deadLetters];
    const s = ctx.session;
    const t0 = ctx.clock.now();
    for (const o of outputs) await s.producer.produce(o);
    if (outputs.length > 0) {
      await s.producer.flush(ctx.o.kafka.messageTimeoutMs);
      // Read before every report arrived, the tally could miss a failed record and its offset would
      // be committed: the record lost. The port's flush waits for them; this holds for any port.
      if (s.producer.reportsIn && !(await s.producer.reportsIn(ctx.o.kafka.messageTimeoutMs)))
        throw classifyKafkaError(
          { code: code('_TIMED_OUT'), message: 'the delivery reports of flushed outputs did not arrive' },
          'produce',
        );
      const t = s.producer.tally();
      if (t.firstError) throw t.firstError;
    }
    await ctx.hooks.beforeCommit?.(info);
    await s.retryInPlace(
      'commit-offsets',
      () => s.consumer.commitOffsets(nextOffsets(records)),
      ctx.o.kafka.commitRetryTimeoutMs,
    );
    recordCommit(ctx, outputs.length, t0);
    await ctx.hooks.afterCommit?.(info);
    return true;
  }
}
