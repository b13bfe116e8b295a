import { DEFAULT_TRANSACTION_VERSION } from '../../kafka/client-config.ts';
import { classifyKafkaError } from '../../kafka/classify.ts';
import { KafkaError } from '../../kafka/kafka-error.ts';
import { tpKey } from '../../kafka/records.ts';
import { explainRefusal } from '../../kafka/refusal.ts';
import { kafkaSecurity, principalOf } from '../../kafka/security.ts';
import { ReconnectStopped, RetriesExhausted } from '../kafka-session.ts';
import {
  isTransactionEnd,
  planRecovery,
  type RecoveryContext,
  type RecoveryPlan,
  type RecoverySituation,
  type RecoveryStep,
} from '../recovery-plan.ts';
import { retryTopicsOf } from '../record-errors/retry-topics.ts';
import { changelogTopic } from '../state/changelog-topics.ts';
import { RepeatedErrors } from './repeated-errors.ts';
import { StaleBatch, errorText, fail, observe, type WorkerContext } from './worker-context.ts';
import type { AbortReason } from '../worker-options.ts';

const FATAL_WINDOW_MS = 60_000;
/** Fences on a transaction's end this close together mean a real newer instance (recovery-plan.ts). */
const END_FENCE_WINDOW_MS = 10 * 60_000;

/** The topics a worker's transactions write beside its outputs: dead letters, retry hops, changelogs. */
function transactionTopics(ctx: Pick<RecoveryExecutorContext, 'stage' | 'policy' | 'groupId'>): string[] {
  const { stage, policy } = ctx;
  const retries = policy.retryTopics ? retryTopicsOf(stage.inputTopics, policy.retryTopics) : [];
  const deadLetters =
    policy.deadLetters === false ? [] : stage.inputTopics.map((t) => policy.deadLetterTopic(t));
  const changelogs = Object.keys(stage.stores ?? {}).map((store) => changelogTopic(ctx.groupId, store));
  return [...new Set([...deadLetters, ...retries, ...changelogs])];
}

/** What the recovery reads of the worker and the owners it changes (lifecycle, transaction). */
export type RecoveryExecutorContext = Pick<
  WorkerContext,
  | 'o'
  | 'stage'
  | 'policy'
  | 'groupId'
  | 'clock'
  | 'log'
  | 'metrics'
  | 'hooks'
  | 'alerts'
  | 'epochs'
  | 'session'
  | 'holds'
  | 'stores'
  | 'lifecycle'
  | 'txn'
  | 'inFlight'
  | 'committedFloor'
>;

/**
 * Carries out recovery plans. It decides nothing itself: every failure, including the failure of a
 * recovery step, is turned into a plan by `planRecovery` and the plan's steps are run in order.
 */
export class RecoveryExecutor {
  readonly #fatal: RepeatedErrors;
  readonly #other: RepeatedErrors;
  readonly #endFences: RepeatedErrors;
  /** Plans made when an error was reported asynchronously, carried out when the loop picks it up. */
  readonly #planned = new WeakMap<KafkaError, RecoveryPlan>();
  /** An error the consumer reported between calls; the loop recovers from it at its next step. */
  #pending: KafkaError | undefined;
  /** When a streak of retriable errors thrown by unwrapped calls (consume, produce) began. */
  #retryingSince: number | undefined;

  constructor(private readonly ctx: RecoveryExecutorContext) {
    this.#fatal = new RepeatedErrors(ctx.clock, FATAL_WINDOW_MS);
    this.#other = new RepeatedErrors(ctx.clock, ctx.o.otherErrorLimit.windowMs);
    this.#endFences = new RepeatedErrors(ctx.clock, END_FENCE_WINDOW_MS);
  }

  /** Plans for `err` in `situation`, with what the worker knows now. */
  plan(refused: KafkaError, situation: RecoverySituation, deadlinePassed = true): RecoveryPlan {
    const ctx = this.ctx;
    const err = explainRefusal(refused, {
      principal: principalOf(kafkaSecurity()),
      groupId: ctx.groupId,
      transactionalId:
        ctx.o.mode === 'exactly-once'
          ? (ctx.o.kafka.transactionalId ?? `${ctx.stage.name}-${ctx.o.instanceId}`)
          : undefined,
      inputs: ctx.stage.inputTopics,
      outputs: ctx.stage.outputTopics === 'any' ? [] : ctx.stage.outputTopics,
      alsoWritten: transactionTopics(ctx),
    });
    const rc: RecoveryContext = {
      situation,
      deadlinePassed,
      // Only failures the loop recovers from count toward the limits, not reports the client handles.
      recentFatal:
        err.kind === 'fatal' && (situation === 'loop' || situation === 'start')
          ? this.#fatal.add('fatal')
          : this.#fatal.count('fatal'),
      fatalLimit: ctx.o.fatalLimit,
      recentOther:
        (err.kind === 'other' || err.kind === 'refused') && situation === 'loop'
          ? this.#other.add(`${err.codeName}|${err.operation}|${err.message}`)
          : 0,
      otherLimit: ctx.o.otherErrorLimit.count,
      hasConsumer: ctx.session.hasConsumer,
      transactionOpen: ctx.txn.open,
      stopping: ctx.lifecycle.stopRequested,
      endBumpsEpoch:
        ctx.o.mode === 'exactly-once' &&
        (ctx.o.kafka.transactionVersion ?? DEFAULT_TRANSACTION_VERSION) === 2,
      endCallMs: ctx.txn.lastEndMs,
      // Counted where the fence is recovered from: a commit's in the loop, an abort's at the abort.
      recentEndFences:
        err.kind === 'fenced' && isTransactionEnd(err) && (situation === 'loop' || situation === 'abort')
          ? this.#endFences.add('end')
          : this.#endFences.count('end'),
    };
    const plan = planRecovery(err, rc);
    for (const signal of plan.signals) {
      if (signal === 'max-poll-exceeded') ctx.metrics.maxPollExceeded.inc();
      if (signal === 'membership-error') ctx.alerts.membershipError();
    }
    return plan;
  }

  /**
   * The consumer's error callback: the plan is made now and carried out at the loop's next step;
   * processing in flight is told its batch is stale.
   */
  onConsumerError(err: KafkaError): void {
    const ctx = this.ctx;
    const plan = this.plan(err, 'consumer-error');
    if (plan.type === 'ignore') {
      ctx.log.debug({ err: err.toLog() }, 'kafka: consumer client error');
      return;
    }
    ctx.log.warn(
      { err: err.toLog(), action: plan.type },
      'kafka: consumer error; recovering at the next step',
    );
    if (this.#pending === undefined) {
      this.#planned.set(err, plan);
      this.#pending = err;
    }
    ctx.inFlight.abort(new StaleBatch(`consumer error ${err.codeName}`));
  }

  /** A plan made outside the loop (at start) that the loop's first step carries out. */
  defer(err: KafkaError, plan: RecoveryPlan): void {
    this.#planned.set(err, plan);
    this.#pending = err;
  }

  /** An error reported between calls is waiting for the loop's next step. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /** Throws the error reported between calls, if any, for the loop to recover from. */
  throwPending(): void {
    const e = this.#pending;
    if (e) {
      this.#pending = undefined;
      throw e;
    }
  }

  /** Recovers from an error thrown out of one iteration of the loop. */
  async recover(e: unknown): Promise<void> {
    const ctx = this.ctx;
    if (ctx.lifecycle.stopRequested) {
      await this.abort('shutdown');
      return;
    }
    ctx.lifecycle.recovering();
    const exhausted = e instanceof RetriesExhausted ? e : undefined;
    const err = exhausted?.cause ?? (e instanceof KafkaError ? e : classifyKafkaError(e, 'client'));
    const plan =
      this.#planned.get(err) ??
      this.plan(err, 'loop', exhausted?.deadlinePassed ?? this.#deadlinePassed(err));
    this.#planned.delete(err);
    ctx.metrics.recoveries.inc({ kind: err.kind, action: plan.type });
    ctx.alerts.recovery();
    ctx.log.warn(
      {
        event: 'recovery',
        action: plan.type,
        steps: plan.steps,
        err: err.toLog(),
        epoch: ctx.epochs.current,
        partitions: ctx.epochs.assigned().map(tpKey),
        ...(e instanceof Error && !(e instanceof KafkaError) && !exhausted ? { stack: e.stack } : {}),
      },
      `kafka: recovering from ${err.codeName} (${err.kind}) by ${plan.type}`,
    );
    await this.#reportAndExecute(plan, err);
  }

  /** A step of the loop succeeded: a streak of in-place retries is over. */
  succeeded(): void {
    this.#retryingSince = undefined;
  }

  /**
   * An unwrapped call (consume, produce) is retried in place by the loop's next step; its deadline is
   * the API timeout from the first failure of the streak.
   */
  #deadlinePassed(err: KafkaError): boolean {
    if (err.kind !== 'retriable') return true;
    const now = this.ctx.clock.now();
    this.#retryingSince ??= now;
    const passed = now - this.#retryingSince >= this.ctx.o.kafka.apiTimeoutMs;
    if (passed) this.#retryingSince = undefined;
    return passed;
  }

  /** Runs a plan: stop, abort first, then its steps; a failing step is planned for in turn. */
  async execute(plan: RecoveryPlan, err: KafkaError): Promise<void> {
    const ctx = this.ctx;
    if (plan.type === 'stop') fail(ctx, plan.reason);
    if (plan.type === 'ignore') return;
    if (plan.abortFirst) await this.abort(err.kind);
    else if (plan.type === 'reconnect' || plan.type === 'recreate-producer') {
      // The transaction dies with the producer: store changes that joined it go with it.
      ctx.txn.abandon();
      ctx.stores?.aborted();
    }
    for (const step of plan.steps) {
      try {
        await this.#run(step);
      } catch (inner) {
        await this.#stepFailed(plan, step, inner);
        return;
      }
    }
  }

  async #stepFailed(plan: RecoveryPlan, step: RecoveryStep, inner: unknown): Promise<void> {
    const ctx = this.ctx;
    if (inner instanceof ReconnectStopped) return fail(ctx, inner.reason);
    const err = inner instanceof RetriesExhausted ? inner.cause : classifyKafkaError(inner, 'client');
    if (plan.onStepFailure === 'stop' && !ctx.lifecycle.stopRequested)
      return fail(ctx, `recovery step ${step} failed: ${err.codeName}: ${err.message}`);
    if (ctx.lifecycle.stopRequested) return;
    const next = this.plan(err, step === 'rewind' ? 'rewind' : 'step-failed');
    ctx.log.warn(
      { event: 'recovery-step-failed', step, err: err.toLog(), action: next.type, steps: next.steps },
      `kafka: recovery step ${step} failed; ${next.type} instead`,
    );
    await this.execute({ ...next, onStepFailure: 'stop' }, err);
  }

  async #run(step: RecoveryStep): Promise<void> {
    const ctx = this.ctx;
    const s = ctx.session;
    switch (step) {
      case 'rewind':
        return this.#rewind();
      case 'start-consumer':
        return s.startConsumer();
      case 'reset-consumer':
        return s.resetConsumer();
      case 'close-producer':
        ctx.txn.abandon();
        return s.closeProducer();
      case 'start-producer':
        await s.startProducer();
        return ctx.txn.producerReady();
      case 'reconnect':
        await s.reconnect();
        // The reconnect loop gives up without a producer only when the worker stops.
        if (!ctx.lifecycle.stopRequested) ctx.txn.producerReady();
        return;
    }
  }

  /** Seeks every assigned partition back to the group's committed offset, so nothing is skipped. */
  async rewind(): Promise<void> {
    try {
      await this.#rewind();
    } catch (e) {
      // A seek can fail while the partition's fetcher starts; the plan says what replaces it.
      const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'seek');
      const plan = this.plan(err, 'rewind');
      this.ctx.log.warn(
        { err: errorText(e), action: plan.type },
        `kafka: rewind failed; ${plan.type} instead`,
      );
      await this.execute(plan, err);
    }
  }

  async #rewind(): Promise<void> {
    const ctx = this.ctx;
    const s = ctx.session;
    const assigned = ctx.epochs.assigned();
    if (assigned.length === 0) return;
    s.consumer.resume(ctx.holds.flowing());
    const reported = await s.retryInPlace('committed', () =>
      s.consumer.committed(assigned, ctx.o.kafka.apiTimeoutMs),
    );
    const { positions, raised } = ctx.committedFloor.apply(reported);
    if (raised.length > 0)
      ctx.log.warn(
        { event: 'rewind-floor', raised },
        'kafka: the group reported committed offsets below those this worker committed; rewinding to its own',
      );
    ctx.log.debug(
      { event: 'rewind', positions: positions.map((c) => `${tpKey(c)}@${c.offset}`) },
      'kafka: rewound',
    );
    for (const c of positions) await s.consumer.seek(c, ctx.o.kafka.apiTimeoutMs);
  }

  /** Aborts the open transaction (bounded); a failed abort is planned like any other failure. */
  async abort(reason: AbortReason): Promise<void> {
    const ctx = this.ctx;
    ctx.stores?.aborted();
    if (!ctx.txn.open) return;
    const s = ctx.session;
    const tally = s.producer.tally();
    ctx.metrics.aborts.inc({ reason });
    ctx.alerts.aborted();
    observe(ctx, () =>
      ctx.hooks.onAbort?.({ reason, epoch: ctx.epochs.current, discardedOutputs: tally.produced }),
    );
    ctx.metrics.discardedOutputs.inc(tally.produced);
    try {
      await ctx.txn.abort();
      ctx.log.warn(
        { event: 'abort', reason, discardedOutputs: tally.produced, purged: s.producer.tally().purged },
        'kafka: transaction aborted; its outputs are discarded (delivery reports with _PURGE_QUEUE are these outputs, not data loss)',
      );
    } catch (e) {
      const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'abort-transaction');
      const plan = this.plan(err, 'abort');
      ctx.metrics.recoveries.inc({ kind: err.kind, action: plan.type });
      ctx.log.warn(
        { event: 'abort-failed', reason, err: err.toLog(), action: plan.type, steps: plan.steps },
        `kafka: abort failed; ${plan.type}`,
      );
      await this.#reportAndExecute(plan, err, 'abort');
    }
  }

  /** Tells the `onRecovery` hook about `plan` (`situation` only when it is not the loop's), then runs it. */
  async #reportAndExecute(plan: RecoveryPlan, err: KafkaError, situation?: RecoverySituation): Promise<void> {
    const ctx = this.ctx;
    observe(ctx, () =>
      ctx.hooks.onRecovery?.({
        kind: err.kind,
        code: err.codeName,
        operation: err.operation,
        action: plan.type,
        epoch: ctx.epochs.current,
        steps: plan.steps,
        ...(situation ? { situation } : {}),
        ...(plan.type === 'stop' ? { reason: plan.reason } : {}),
      }),
    );
    await this.execute(plan, err);
  }
}
