import { classifyKafkaError } from '../../kafka/classify.ts';
import type { FetchedRecord, TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import { partitionsOf } from '../batch-offsets.ts';
import type { AdminPort } from '../../kafka/admin.ts';
import { adminGroupCoverage, observeCoverage, type GroupCoveragePort } from '../group-coverage.ts';
import { defaultClients } from '../kafka-session.ts';
import { AtLeastOnceCommitter } from './at-least-once-committer.ts';
import { settleBatch } from '../record-errors/settle-batch.ts';
import { processIsolated, type IsolatedResult } from './bisection.ts';
import type { Committer } from './committer.ts';
import { ExactlyOnceCommitter } from './exactly-once-committer.ts';
import { SpanningCommitter } from './spanning-committer.ts';
import type { RecoveryExecutor } from './recovery-executor.ts';
import { invokeStage } from './stage-invoker.ts';
import { TimerCalls } from './timer-calls.ts';
import { recordCommit } from './committer.ts';
import { TransactionRunner } from './transaction-runner.ts';
import { StaleBatch, byPosition, errorText, observe, type WorkerContext } from './worker-context.ts';
import type { AbortReason } from '../worker-options.ts';

const COVERAGE_INTERVAL_MS = 10_000;

/**
 * The consume-process-produce loop. `step()` is one iteration and the recovery it needs, so a test
 * can drive the loop one step at a time on fake clients and a fake clock.
 */
export class WorkerLoop {
  readonly #committer: Committer;
  readonly #timers: TimerCalls;
  #lagSampledAt = 0;
  /** When a full batch last asked whether it left the input at its end (see {@link #caughtUp}). */
  #endAskedAt = -Infinity;
  /**
   * Partitions of batches the stage finished whose transaction had not committed when their
   * settlement returned (a commit behind the loop, an open span), with the commit count then: a
   * later commit settles them; a failure first makes their deliveries not count (forgive).
   */
  #unsettled: { parts: Map<string, TopicPartition>; commits: number } = { parts: new Map(), commits: 0 };
  /** Every partition of the subscription has an owner (alert `partition_unowned`); asked now and then. */
  #coverage: { admin: AdminPort; port: GroupCoveragePort; at: number; busy: boolean } | undefined;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly recovery: RecoveryExecutor,
  ) {
    const stale = {
      abort: (reason: AbortReason) => recovery.abort(reason),
      discard: (records: readonly TopicPartition[], epoch: number, reason: string) =>
        this.#discardStale(records, epoch, reason),
    };
    // Begin, produce, end: one sequence for a batch, a span of batches and a timer call.
    const runner = new TransactionRunner({
      txn: ctx.txn,
      producer: () => ctx.session.producer,
      hooks: ctx.hooks,
      stores: ctx.stores,
      committed: (produced, startedAt, offsets) => recordCommit(ctx, produced, startedAt, offsets),
      abort: (reason) => recovery.abort(reason),
    });
    this.#committer =
      ctx.o.mode === 'at-least-once'
        ? new AtLeastOnceCommitter(ctx)
        : ctx.o.commitInterval
          ? new SpanningCommitter(ctx, runner, ctx.o.commitInterval, stale)
          : new ExactlyOnceCommitter(ctx, runner, stale);
    this.#timers = new TimerCalls(ctx, runner, {
      pending: () => recovery.pending,
      closeSpan: () => this.#committer.flush?.() ?? Promise.resolve(),
      spanYoung: () => this.#committer.spanYoung?.() ?? false,
    });
  }

  /** Runs until a stop is requested (or a plan stopped the worker), then closes the clients. */
  async run(): Promise<void> {
    const ctx = this.ctx;
    while (!ctx.lifecycle.stopRequested) await this.step();
    await this.shutdown();
  }

  /** Aborts an open transaction, leaves the group, closes the clients. */
  async shutdown(): Promise<void> {
    const ctx = this.ctx;
    const clean = ctx.lifecycle.state !== 'failed';
    ctx.lifecycle.stopping();
    // A transaction left open across batches is committed at a clean stop, not thrown away.
    await (clean ? this.#committer.flush?.() : this.#committer.settle?.())?.catch((e: unknown) =>
      ctx.log.warn({ err: errorText(e) }, 'kafka: commit at stop failed; aborting'),
    );
    if (ctx.txn.open) await this.recovery.abort('shutdown');
    await this.#closeStores();
    await ctx.session.close();
    this.#coverage?.admin.close();
    this.#coverage = undefined;
    ctx.lifecycle.stopped();
    ctx.log.info({ event: 'stopped', state: ctx.lifecycle.state }, 'worker stopped');
  }

  /**
   * Last checkpoints while the partitions are still ours and no transaction is open: once the
   * producer has flushed and its delivery reports reached the event loop, they cover every commit,
   * so the next start reads no changelog tail.
   */
  async #closeStores(): Promise<void> {
    const ctx = this.ctx;
    if (!ctx.stores) return;
    let delivered: ReadonlyMap<string, number> | undefined;
    try {
      await ctx.session.producer.flush(ctx.o.kafka.apiTimeoutMs);
      delivered = ctx.session.producer.deliveredOffsets();
    } catch {
      // No producer (never started, or closed by a failed abort): the per-commit checkpoints stand.
    }
    await ctx.stores.engine.close(delivered);
  }

  /** One iteration; a failure is recovered from by its plan before this resolves. */
  async step(): Promise<void> {
    try {
      await this.#iteration();
      this.recovery.succeeded();
    } catch (e) {
      // No recovery while a commit is under way; its own failure, if any, leaves the transaction open.
      await this.#committer.settle?.().catch(() => undefined);
      if (this.ctx.progress.commits === this.#unsettled.commits)
        this.ctx.deliveries.forgive([...this.#unsettled.parts.values()]);
      this.#unsettled.parts.clear();
      await this.recovery.recover(e);
    }
  }

  async #iteration(): Promise<void> {
    const ctx = this.ctx;
    ctx.progress.looped(ctx.clock.now());
    this.recovery.throwPending();
    await ctx.holds.resumeDue();
    await ctx.stores?.resumeRestored();
    await this.#timers.runDue();
    const consumer = ctx.session.consumer;
    const timeoutMs = this.#committer.consumeTimeoutMs?.(ctx.o.batch.timeoutMs) ?? ctx.o.batch.timeoutMs;
    let all: FetchedRecord[];
    try {
      all = await consumer
        .consume(ctx.o.batch.size, timeoutMs)
        .catch((e: unknown) => Promise.reject(classifyKafkaError(e, 'consume')));
    } finally {
      // The batch fetched while the previous transaction committed is used only once that commit held.
      await this.#committer.settle?.();
    }
    // The binding hands rebalance events and fetched records to the event loop separately, so the
    // records can arrive before the assignment they were fetched under. One turn of the loop delivers
    // every event the client queued meanwhile; the batch's epoch is taken after it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const epoch = ctx.epochs.current;
    this.recovery.throwPending();
    const above = await this.#aboveCommit(all);
    const fetched = ctx.holds.admit(ctx.stores ? ctx.stores.admit(above) : above);
    this.#sampleLag();
    if (fetched.length === 0) return this.#committer.flush?.();
    ctx.metrics.batchSize.observe(fetched.length);
    ctx.metrics.records.inc({ direction: 'in' }, fetched.length);
    ctx.alerts.consumed(fetched.length);
    const parts = partitionsOf(fetched);
    const stale = ctx.epochs.staleReason(epoch, parts);
    if (stale !== undefined) return this.#discardStale(fetched, epoch, stale);

    ctx.stores?.beginBatch(ctx.txn.open);
    try {
      await this.#processBatch(fetched, epoch, parts);
    } finally {
      // Committed by now, joined to the transaction that commits later, or its store changes are
      // dropped with the batch (stale, rewound, failed).
      ctx.stores?.endBatch();
    }
    if (this.#caughtUp(all.length)) await this.#committer.caughtUp?.();
  }

  /**
   * Caught up: a batch short of full, or one that read the input to its end (at 1,000 records/s a
   * batch of 50 fills in its 50 ms timeout). Only a backlog keeps a span open for its interval.
   * Asked only of a committer that spans batches, and a full batch asks the client at most once per
   * batch timeout: atEnd() reads every assigned partition's position and watermarks from the client,
   * native calls that each full batch of a backlog paid for an answer it already knew. A batch that
   * skips the question is at most one batch timeout from the answer: an input at its end returns the
   * next batch short.
   */
  #caughtUp(fetched: number): boolean {
    const ctx = this.ctx;
    if (!this.#committer.caughtUp) return false;
    if (fetched < ctx.o.batch.size) return true;
    const now = ctx.clock.now();
    if (now - this.#endAskedAt < ctx.o.batch.timeoutMs) return false;
    this.#endAskedAt = now;
    return ctx.session.consumer.atEnd();
  }

  /**
   * Records this worker already committed are never processed again, wherever the client's
   * position came from: they are dropped, and a partition with nothing else in the batch is sought
   * to the commit (a failed seek only means more of them are fetched and dropped).
   */
  async #aboveCommit(all: FetchedRecord[]): Promise<FetchedRecord[]> {
    const ctx = this.ctx;
    const { kept, below } = ctx.committedFloor.screen(all);
    if (below.length === 0) return kept;
    ctx.alerts.belowCommit();
    // Repeated warnings are rate-limited by their text: the partitions are in it, so that one
    // partition's repeats do not hide another's.
    const where = below.map((b) => tpKey(b.floor)).join(', ');
    ctx.log.warn(
      {
        event: 'below-commit',
        partitions: below.map((b) => ({
          partition: tpKey(b.floor),
          fetched: b.fetched,
          dropped: b.dropped,
          floor: b.floor.offset,
        })),
      },
      `kafka: the consumer fetched records of ${where} that this worker had already committed (its ` +
        'position was reset below the commit); they are dropped, not processed again',
    );
    for (const b of below) {
      ctx.metrics.belowCommit.inc(b.dropped);
      if (b.seek)
        await ctx.session.consumer
          .seek(b.floor, ctx.o.kafka.apiTimeoutMs)
          .catch((e: unknown) =>
            ctx.log.warn(
              { err: errorText(e), partition: tpKey(b.floor) },
              'kafka: seek to the commit failed; dropping on',
            ),
          );
    }
    return kept;
  }

  async #processBatch(fetched: FetchedRecord[], epoch: number, parts: TopicPartition[]): Promise<void> {
    const ctx = this.ctx;
    const consumer = ctx.session.consumer;
    const plan = await ctx.deliveries.plan(fetched);
    let result: IsolatedResult;
    try {
      result = await this.#processIsolated(plan.process, epoch);
    } catch (e) {
      if (e instanceof StaleBatch) return this.#discardStale(fetched, epoch, e.message);
      throw e;
    } finally {
      if (ctx.session.hasConsumer && ctx.session.consumer === consumer) consumer.resume(ctx.holds.flowing());
    }
    // The stage finished the batch: from here on, a failure is not its records' fault.
    try {
      this.recovery.throwPending();
      const staleAfter = ctx.epochs.staleReason(epoch, parts);
      if (staleAfter !== undefined) {
        ctx.deliveries.forgive(parts);
        return await this.#discardStale(fetched, epoch, staleAfter);
      }
      await settleBatch(
        ctx,
        {
          committer: this.#committer,
          rerun: (records) => this.#processIsolated(records, epoch),
          rewind: () => this.#rewind('rerun-failed'),
        },
        [...plan.process, ...plan.poison].sort(byPosition),
        result,
        plan.poison,
        epoch,
      );
    } catch (e) {
      ctx.deliveries.forgive(parts);
      throw e;
    }
    this.#settled(parts);
    for (const s of plan.seekAfter) if (!ctx.holds.has(s)) await consumer.seek(s, ctx.o.kafka.apiTimeoutMs);
  }

  #settled(parts: readonly TopicPartition[]): void {
    const commits = this.ctx.progress.commits;
    if (commits !== this.#unsettled.commits) this.#unsettled = { parts: new Map(), commits };
    for (const tp of parts) this.#unsettled.parts.set(tpKey(tp), tp);
  }

  #processIsolated(records: FetchedRecord[], epoch: number): Promise<IsolatedResult> {
    const stores = this.ctx.stores;
    return processIsolated(
      async (batch) => {
        const savepoint = stores?.savepoint();
        try {
          return await invokeStage(this.ctx, batch, epoch, (e) =>
            this.recovery.onConsumerError(classifyKafkaError(e, 'consume')),
          );
        } catch (e) {
          // The store changes of a call whose result is thrown away go with it.
          if (savepoint !== undefined) stores!.rollbackTo(savepoint);
          throw e;
        }
      },
      records,
      this.ctx.metrics,
    );
  }

  async #discardStale(records: readonly TopicPartition[], epoch: number, reason: string): Promise<void> {
    const ctx = this.ctx;
    ctx.metrics.staleBatches.inc();
    ctx.log.warn(
      {
        event: 'stale-batch',
        epoch,
        currentEpoch: ctx.epochs.current,
        discarded: records.length,
        partitions: partitionsOf(records).map(tpKey),
        reason,
      },
      'kafka: stale batch discarded before any output transaction',
    );
    observe(ctx, () =>
      ctx.hooks.onStale?.({ reason, epoch, currentEpoch: ctx.epochs.current, records: records.length }),
    );
    if (this.recovery.pending) return;
    await this.#rewind('stale');
  }

  /**
   * Back to the committed offsets. A transaction left open across batches is aborted first: its
   * records are behind the committed offsets and would otherwise be produced twice in it.
   */
  async #rewind(reason: AbortReason): Promise<void> {
    if (this.ctx.txn.open) await this.recovery.abort(reason);
    await this.recovery.rewind();
  }

  #sampleLag(): void {
    // Once a second is plenty for the gauge and the alert window, and keeps the hot path cheap.
    const ctx = this.ctx;
    const now = ctx.clock.now();
    if (!ctx.session.hasConsumer || now - this.#lagSampledAt < 1_000) return;
    this.#lagSampledAt = now;
    const lag = ctx.session.consumer.lag();
    if (lag !== undefined) {
      ctx.metrics.lag.set(lag);
      ctx.alerts.lag(lag);
    }
    this.#sampleCoverage(now);
  }

  /**
   * Compares the subscribed topics' partitions with the group's assignment every COVERAGE_INTERVAL_MS,
   * off the loop's path (a slow or failing admin call never holds a batch back).
   */
  #sampleCoverage(now: number): void {
    const ctx = this.ctx;
    if (!this.#coverage) {
      const admin = (ctx.o.clients?.admin ?? defaultClients.admin)(
        ctx.o.kafka.bootstrapServers,
        `${ctx.stage.name}-coverage`,
      );
      this.#coverage = {
        admin,
        port: adminGroupCoverage(admin, ctx.o.kafka.apiTimeoutMs),
        at: 0,
        busy: false,
      };
    }
    const c = this.#coverage;
    if (c.busy || now - c.at < COVERAGE_INTERVAL_MS) return;
    c.at = now;
    c.busy = true;
    observeCoverage(c.port, ctx.groupId, ctx.stage.inputTopics)
      .then(({ expected, owned }) => ctx.alerts.coverage(expected, owned))
      .catch((e: unknown) => ctx.log.debug({ err: String(e) }, 'coverage check failed; tried again later'))
      .finally(() => {
        c.busy = false;
      });
  }
}
