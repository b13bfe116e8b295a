import type { FetchedRecord } from '../../kafka/records.ts';
import { nextOffsets, partitionsOf } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import { TransactionSpan, type CommitInterval, type Position } from '../transaction-span.ts';
import type { CommitInfo } from '../worker-options.ts';
import { checkDeclaredTopics, settleNamed, type Committer } from './committer.ts';
import type { TransactionRunner } from './transaction-runner.ts';
import type { WorkerContext } from './worker-context.ts';

/** What the committer reads of the worker. */
export type SpanningContext = Pick<WorkerContext, 'o' | 'stage' | 'clock' | 'epochs' | 'stores' | 'session'>;

/**
 * Exactly-once with a commit interval: one transaction spans several batches. Each batch's outputs
 * go into the open transaction at once; the input offsets of all its batches are sent and the
 * transaction committed when the span is due (its age or record count, see {@link TransactionSpan}),
 * when the input is caught up ({@link caughtUp}), when the input runs dry ({@link flush}), or at a
 * clean stop. A transaction that a recovery aborted meanwhile (the transaction is no longer open)
 * takes its span with it: the rewind to the committed offsets consumes those records again.
 *
 * Sending the offsets and the commit call run while the loop fetches the next batch: {@link commit}
 * returns once they are under way, and the loop calls {@link settle} before it does anything else
 * with the batch it fetched meanwhile, so a failed send or commit is recovered from (abort, rewind)
 * before that batch is processed, and is discarded with it. Sending the offsets is two round trips
 * (AddOffsetsToTxn, TxnOffsetCommit); awaited before returning, they held a busy collector 20-30 ms
 * a span.
 *
 * State stores follow the transaction: each batch's store changes join the open state transaction
 * with its outputs, the changelog records of the whole span (the last write per key) are produced
 * just before the offsets, and the changes enter the committed view and the local copy only once
 * the commit returned. An abort takes every batch's changes with it.
 */
export class SpanningCommitter implements Committer {
  readonly #span: TransactionSpan;
  /** The first batch's epoch: a revoke after it makes the whole span stale. */
  #epoch = 0;
  #outputs = 0;
  #deadLetters = 0;
  #startedAt = 0;

  constructor(
    private readonly ctx: SpanningContext,
    private readonly runner: TransactionRunner,
    interval: CommitInterval,
    private readonly stale: {
      discard(records: readonly Position[], epoch: number, reason: string): Promise<void>;
    },
  ) {
    this.#span = new TransactionSpan(interval);
  }

  async commit(
    records: FetchedRecord[],
    epoch: number,
    outputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx.stage, outputs);
    await this.settle();
    if (!this.runner.txn.open) {
      this.#span.clear();
      this.#startedAt = ctx.clock.now();
      await this.runner.begin();
      this.#epoch = epoch;
      this.#outputs = 0;
      this.#deadLetters = 0;
    }
    await this.runner.produce(outputs);
    await this.runner.produce(deadLetters);
    this.#span.add(records, ctx.clock.now());
    ctx.stores?.joined();
    this.#outputs += outputs.length;
    this.#deadLetters += deadLetters.length;
    return this.#span.due(ctx.clock.now()) ? this.#commitSpan() : true;
  }

  /**
   * Commits the open span now and waits for the commit (the input ran dry, a timer is due, or the
   * worker stops cleanly): afterwards no transaction is open.
   */
  async flush(): Promise<void> {
    await this.settle();
    if (this.runner.txn.open && this.#span.open) await this.#commitSpan();
    await this.settle();
  }

  /**
   * The input is caught up: the open span commits now, behind the loop like a due one. Its interval
   * is there to share one transaction among full batches; below full, waiting out the rest of it
   * only delays the outputs by up to the interval, once per stage a record passes through.
   */
  async caughtUp(): Promise<void> {
    if (this.runner.txn.open && this.#span.open) await this.#commitSpan();
  }

  /** Waits for the commit under way, if any; rejects with its error, named ({@link settleNamed}). */
  settle(): Promise<void> {
    return settleNamed(this.runner, this.ctx);
  }

  /** The next consume may wait only until the open span is due. */
  consumeTimeoutMs(batchTimeoutMs: number): number {
    return this.runner.txn.open
      ? this.#span.consumeTimeoutMs(this.ctx.clock.now(), batchTimeoutMs)
      : batchTimeoutMs;
  }

  spanYoung(): boolean {
    return this.runner.txn.open && this.#span.open && !this.#span.due(this.ctx.clock.now());
  }

  async #commitSpan(): Promise<boolean> {
    const records = [...this.#span.records];
    const info: CommitInfo = {
      epoch: this.#epoch,
      records: records.length,
      outputs: this.#outputs,
      deadLetters: this.#deadLetters,
    };
    this.#span.clear();
    const stale = await this.runner.end({
      offsets: nextOffsets(records),
      info,
      produced: info.outputs + info.deadLetters,
      startedAt: this.#startedAt,
      staleReason: () => this.ctx.epochs.staleReason(info.epoch, partitionsOf(records)),
      behind: 'offsets-and-commit',
    });
    if (stale === undefined) return true;
    await this.stale.discard(records, info.epoch, stale);
    return false;
  }
}
