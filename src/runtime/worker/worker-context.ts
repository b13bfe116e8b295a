import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AlertConditions } from '../alert-conditions.ts';
import type { AssignmentEpochs } from '../assignment-epochs.ts';
import type { Clock } from '../clock.ts';
import type { DeadLetterLimit } from '../dead-letter-limit.ts';
import type { DeliveryPlanner } from '../delivery-attempts/delivery-planner.ts';
import type { FailureTracker } from '../failure-tracker.ts';
import type { KafkaSession } from '../kafka-session.ts';
import type { RecordErrorPolicy } from '../record-error-policy.ts';
import type { StateBinding } from '../state/state-binding.ts';
import type { Stage } from '../stage.ts';
import type { WorkerHooks, WorkerOptions } from '../worker-options.ts';
import type { WorkerMetrics } from '../worker-metrics.ts';
import type { PartitionHolds } from './partition-holds.ts';
import { errorText } from '../../errors/error-text.ts';

export type WorkerState = 'starting' | 'running' | 'recovering' | 'stopping' | 'stopped' | 'failed';

export type ResolvedWorkerOptions = WorkerOptions &
  Required<Pick<WorkerOptions, 'keepAliveAfterMs' | 'fatalLimit' | 'otherErrorLimit'>>;

/**
 * What the parts of one worker share: its clients, its assignment, its policies and the little
 * mutable state the loop and the recovery both touch. One per `TransactionalWorker`.
 */
export interface WorkerContext {
  readonly o: ResolvedWorkerOptions;
  readonly stage: Stage;
  readonly groupId: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: WorkerMetrics;
  readonly hooks: WorkerHooks;
  readonly policy: RecordErrorPolicy;
  readonly epochs: AssignmentEpochs;
  readonly alerts: AlertConditions;
  readonly session: KafkaSession;
  readonly holds: PartitionHolds;
  readonly failures: FailureTracker;
  readonly deadLetterLimit: DeadLetterLimit;
  readonly deliveries: DeliveryPlanner;
  /** State stores and timers, for a stage that declares them. */
  readonly stores: StateBinding | undefined;
  state: WorkerState;
  stopRequested: boolean;
  failure: string | undefined;
  /** An error the consumer reported between calls; the loop recovers from it at its next step. */
  pendingError: KafkaError | undefined;
  /** Aborting it tells the running `process` call that its batch is stale. */
  inFlight: AbortController | undefined;
  txnOpen: boolean;
  lastLoopAt: number;
  lastCommitAt: number | undefined;
  commits: number;
}

/** The batch became stale while it was processed; its work is discarded and its records refetched. */
export class StaleBatch extends Error {
  override readonly name: string = 'StaleBatch';
}

/** Processing outlived its deadline: abandoned like a stale batch; the delivery markers count it. */
export class ProcessingTimeout extends StaleBatch {
  override readonly name = 'ProcessingTimeout';
}

/** Observer hooks must not break the loop. */
export function observe(ctx: WorkerContext, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    ctx.log.warn({ err: errorText(e) }, 'worker hook failed');
  }
}

/** Stops the worker for good: not live, the reason in its status. */
export function fail(ctx: WorkerContext, reason: string): void {
  ctx.failure = reason;
  ctx.state = 'failed';
  ctx.stopRequested = true;
  ctx.log.error({ event: 'failed', reason }, `worker stopped: ${reason}`);
}

export function byPosition(a: FetchedRecord, b: FetchedRecord): number {
  return a.topic === b.topic ? a.partition - b.partition || a.offset - b.offset : a.topic < b.topic ? -1 : 1;
}

// The worker's files take it from here; its one definition is in src/errors/.
export { errorText };
