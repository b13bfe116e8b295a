import { stuckCallsExhaustPool, stuckNativeCalls } from '../../kafka/abandoned-clients.ts';
import { tpKey } from '../../kafka/records.ts';
import { ALERT_CONDITIONS, type AlertCondition } from '../alert-conditions.ts';
import { isReady, notReadyReason, type ReadinessFacts } from '../readiness-reason.ts';
import type { WorkerContext, WorkerState } from './worker-context.ts';

export type { WorkerState };

/** What health endpoints and operators see. */
export interface WorkerStatus {
  stage: string;
  instanceId: string;
  state: WorkerState;
  live: boolean;
  ready: boolean;
  epoch: number;
  assigned: string[];
  lastCommitAt: number | undefined;
  lastLoopAt: number;
  committedTransactions: number;
  alerts: AlertCondition[];
  failure?: string;
  /** Why the worker is not ready (failed with which reason, reconnecting to which address since when, ...). */
  notReady?: string;
  /** Partitions of the subscribed topics no group member has owned for longer than the alert bound. */
  unowned?: string[];
}

/** What the status reads of the worker. */
export type StatusContext = Pick<
  WorkerContext,
  'o' | 'stage' | 'clock' | 'log' | 'metrics' | 'alerts' | 'epochs' | 'session' | 'lifecycle' | 'progress'
>;

/**
 * Liveness and readiness. Not live: failed (stopped with a reason), a loop that has not turned for
 * longer than max.poll.interval (at least a minute), or native calls stuck for good.
 */
export class WorkerStatusReporter {
  #stuckReported = false;

  constructor(private readonly ctx: StatusContext) {}

  status(): WorkerStatus {
    const ctx = this.ctx;
    const now = ctx.clock.now();
    const liveWindow = Math.max(ctx.o.kafka.maxPollIntervalMs, 60_000);
    const alerts = ctx.alerts.active();
    for (const c of ALERT_CONDITIONS) ctx.metrics.alert.set({ condition: c }, alerts.includes(c) ? 1 : 0);
    const unowned = ctx.alerts.unowned();
    const facts: ReadinessFacts = {
      state: ctx.lifecycle.state,
      ...(ctx.lifecycle.failure !== undefined ? { failure: ctx.lifecycle.failure } : {}),
      hasConsumer: ctx.session.hasConsumer,
      assigned: ctx.epochs.assigned().length,
      ...ctx.session.connectivity(),
      unowned,
    };
    const ready = isReady(facts);
    const stuck = stuckCallsExhaustPool() ? this.#reportStuck() : undefined;
    ctx.metrics.up.set(ready ? 1 : 0);
    const notReady = ready ? undefined : notReadyReason(facts);
    return {
      stage: ctx.stage.name,
      instanceId: ctx.o.instanceId,
      state: ctx.lifecycle.state,
      live:
        ctx.lifecycle.state !== 'failed' && now - ctx.progress.lastLoopAt < liveWindow && stuck === undefined,
      ready,
      epoch: ctx.epochs.current,
      assigned: ctx.epochs.assigned().map(tpKey),
      lastCommitAt: ctx.progress.lastCommitAt,
      lastLoopAt: ctx.progress.lastLoopAt,
      committedTransactions: ctx.progress.commits,
      alerts,
      ...(ctx.lifecycle.failure !== undefined || stuck !== undefined
        ? { failure: ctx.lifecycle.failure ?? stuck }
        : {}),
      ...(notReady !== undefined ? { notReady } : {}),
      ...(unowned.length > 0 ? { unowned } : {}),
    };
  }

  /** Why the process needs a restart although the loop runs: libuv threads held by stuck calls. */
  #reportStuck(): string {
    const reason =
      `${stuckNativeCalls()} librdkafka call(s) never returned and each holds a libuv pool thread ` +
      `(UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}); the process must be restarted before ` +
      `the pool is used up`;
    if (!this.#stuckReported) {
      this.#stuckReported = true;
      this.ctx.log.error({ event: 'native-calls-stuck', stuck: stuckNativeCalls() }, `not live: ${reason}`);
    }
    return reason;
  }
}
