import type { FetchedRecord } from '../../kafka/records.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AlertConditions } from '../alert-conditions.ts';
import type { AssignmentEpochs } from '../assignment-epochs.ts';
import type { Clock } from '../clock.ts';
import type { DeadLetterLimit } from '../record-errors/dead-letter-limit.ts';
import type { DeliveryPlanner } from '../delivery-attempts/delivery-planner.ts';
import type { FailureTracker } from '../record-errors/failure-tracker.ts';
import type { KafkaSession } from '../kafka-session.ts';
import type { RecordErrorPolicy } from '../record-errors/policy.ts';
import type { StateBinding } from '../state/state-binding.ts';
import type { Stage } from '../stage.ts';
import type { WorkerHooks, WorkerOptions } from '../worker-options.ts';
import type { WorkerMetrics } from '../worker-metrics.ts';
import type { PartitionHolds } from './partition-holds.ts';
import type { Transaction } from './transaction.ts';
import type { WorkerLifecycle } from './worker-lifecycle.ts';
import type { InFlight, WorkerProgress } from './worker-progress.ts';
import { errorText } from '../../errors/error-text.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';
import type { CommittedFloor } from '../committed-floor.ts';

export type { WorkerState } from './worker-lifecycle.ts';

export type ResolvedWorkerOptions = WorkerOptions &
  Required<Pick<WorkerOptions, 'keepAliveAfterMs' | 'fatalLimit' | 'otherErrorLimit'>>;

/**
 * What the parts of one worker share: its clients, its assignment, its policies, and the owners of
 * the little state that changes (`lifecycle`, `txn`, `inFlight`, `progress`); no field is
 * reassigned. One per `TransactionalWorker`. Each part declares the fields it reads as a `Pick`
 * of this; the worker's state and the transaction's change only through their tables.
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
  /** The input offsets this worker committed: no rewind goes below them. */
  readonly committedFloor: CommittedFloor;
  /** The worker's state, its stop request and failure reason. */
  readonly lifecycle: WorkerLifecycle;
  /** The Kafka transaction (exactly-once mode). */
  readonly txn: Transaction;
  /** Aborting it tells the running `process` or `onTimer` call that its work is stale. */
  readonly inFlight: InFlight;
  /** When the loop last turned and committed. */
  readonly progress: WorkerProgress;
}

/** The batch became stale while it was processed; its work is discarded and its records refetched. */
export class StaleBatch extends HamstringError {
  override readonly name: string = 'StaleBatch';
  readonly code: string = 'BATCH_STALE';
}

/** Processing outlived its deadline: abandoned like a stale batch; the delivery markers count it. */
export class ProcessingTimeout extends StaleBatch {
  override readonly name = 'ProcessingTimeout';
  override readonly code = 'PROCESSING_TIMEOUT';
}

/** Observer hooks must not break the loop. */
export function observe(ctx: Pick<WorkerContext, 'log'>, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    ctx.log.warn({ err: errorText(e) }, 'worker hook failed');
  }
}

/** Stops the worker for good: not live, the reason in its status. */
export function fail(ctx: Pick<WorkerContext, 'lifecycle'>, reason: string): void {
  ctx.lifecycle.fail(reason);
}

export function byPosition(a: FetchedRecord, b: FetchedRecord): number {
  return a.topic === b.topic ? a.partition - b.partition || a.offset - b.offset : a.topic < b.topic ? -1 : 1;
}

// The worker's files take it from here; its one definition is in src/errors/.
export { errorText };
