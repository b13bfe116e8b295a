import { runtimeConfigError } from '../../kafka/classify.ts';
import type { FetchedRecord, TopicPartitionOffset } from '../../kafka/records.ts';
import type { Stage, StageOutput } from '../stage.ts';
import type { CommitInfo } from '../worker-options.ts';
import type { WorkerContext } from './worker-context.ts';

/** Makes a settled batch durable: its outputs, its dead letters and its input offsets. */
export interface Committer {
  /** False when the batch went stale before its offsets were bound (nothing committed). */
  commit(
    records: FetchedRecord[],
    epoch: number,
    outputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean>;
  /** Commits a transaction left open across batches (the input ran dry, a clean stop). */
  flush?(): Promise<void>;
  /** Waits for a commit still under way; rejects with its error. */
  settle?(): Promise<void>;
  /** How long the next consume may wait for a batch. */
  consumeTimeoutMs?(batchTimeoutMs: number): number;
  /** True while a transaction spans batches and is not yet due: due timers may wait for its commit. */
  spanYoung?(): boolean;
}

/** A stage writing to a topic it did not declare is a configuration error, not a record's fault. */
export function checkDeclaredTopics(stage: Stage, outputs: readonly StageOutput[]): void {
  if (stage.outputTopics === 'any') return;
  const declared = new Set(stage.outputTopics);
  for (const o of outputs) {
    if (!declared.has(o.topic))
      throw runtimeConfigError(
        `stage ${stage.name} produced to undeclared topic ${o.topic}; its declared outputs ` +
          `(outputTopics) are ${[...declared].join(', ') || 'none'}`,
        'produce',
      );
  }
}

export function commitInfo(
  epoch: number,
  records: readonly FetchedRecord[],
  outputs: readonly StageOutput[],
  deadLetters: readonly StageOutput[],
): CommitInfo {
  return { epoch, records: records.length, outputs: outputs.length, deadLetters: deadLetters.length };
}

/** Bookkeeping after a commit returned: status, metrics, alert windows; a recovery has succeeded. */
export function recordCommit(
  ctx: Pick<WorkerContext, 'clock' | 'alerts' | 'metrics' | 'lifecycle' | 'progress' | 'committedFloor'>,
  produced: number,
  t0: number,
  offsets: readonly TopicPartitionOffset[],
): void {
  ctx.committedFloor.record(offsets);
  const now = ctx.clock.now();
  ctx.progress.committed(now);
  ctx.alerts.committed();
  ctx.metrics.commits.inc();
  ctx.metrics.transactionSeconds.observe((now - t0) / 1000);
  ctx.metrics.lastCommit.set(now / 1000);
  ctx.metrics.records.inc({ direction: 'out' }, produced);
  ctx.lifecycle.committed();
}
