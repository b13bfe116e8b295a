import { classifyKafkaError, runtimeConfigError } from '../../kafka/classify.ts';
import { code } from '../../kafka/error-codes.ts';
import type { ProducerPort } from '../../kafka/producer.ts';
import { RetriesExhausted } from '../kafka-session.ts';
import type { FetchedRecord, TopicPartitionOffset } from '../../kafka/records.ts';
import type { Stage, StageOutput } from '../stage.ts';
import type { CommitInfo } from '../worker-options.ts';
import type { TransactionRunner } from './transaction-runner.ts';
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
  /**
   * The batch just handled came back short of full or read the input to its end, so the input is
   * caught up: a transaction spanning batches commits now (behind the loop, as when due) instead of
   * holding its outputs.
   */
  caughtUp?(): Promise<void>;
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

/** librdkafka's commit error when records of the transaction failed delivery. */
const INCONSISTENT = code('_INCONSISTENT');

/**
 * The error a failed commit is reported as. When the ACL goes after the topic's partitions joined
 * the transaction, the broker refuses the produce requests and librdkafka fails the commit with
 * `_INCONSISTENT` ("n message(s) failed delivery"), a fatal error the recovery would answer by
 * recreating the producer until the fatal limit. A refused delivery of the `authorization` or
 * `config` kind is what such a commit failed on: it is reported instead, naming principal, operation
 * and resource, and the worker stops with it. The same refusal can also fail the offsets' call
 * before the commit (librdkafka returns the failed produce request's error from it, with the
 * operation `send-offsets`, which would be explained as the group or input topics' ACL). The
 * delivery reports may still be on their way to JavaScript when either fails, so they are flushed
 * in first (bounded by `flushMs`).
 */
export async function namedCommitFailure(
  e: unknown,
  producer: Pick<ProducerPort, 'tally' | 'flush'>,
  flushMs: number,
): Promise<unknown> {
  const err =
    e instanceof RetriesExhausted
      ? e.cause
      : e instanceof Error
        ? classifyKafkaError(e, 'commit-transaction')
        : undefined;
  if (err === undefined) return e;
  const failedDeliveries = err.code === INCONSISTENT;
  if (err.kind !== 'config' && err.kind !== 'authorization' && !failedDeliveries) return e;
  if (producer.tally().firstError === undefined) await producer.flush(flushMs).catch(() => undefined);
  const first = producer.tally().firstError;
  if (first?.record === undefined) return e;
  if (first.kind === err.kind) return first;
  return failedDeliveries && (first.kind === 'config' || first.kind === 'authorization') ? first : e;
}

/**
 * Waits for the commit under way, if any; rejects with its error (the transaction is then still
 * open), a refusal that failed the commit named as such ({@link namedCommitFailure}).
 */
export async function settleNamed(
  runner: Pick<TransactionRunner, 'settle'>,
  ctx: Pick<WorkerContext, 'o' | 'session'>,
): Promise<void> {
  try {
    await runner.settle();
  } catch (e) {
    throw await namedCommitFailure(e, ctx.session.producer, ctx.o.kafka.apiTimeoutMs);
  }
}
