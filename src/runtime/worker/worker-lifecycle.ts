import type { Logger } from '../../observability/logger.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';

export type WorkerState = 'starting' | 'running' | 'recovering' | 'stopping' | 'stopped' | 'failed';

/** The states each state may move to. `failed` is entered from any live state and never left. */
export const WORKER_LIFECYCLE: Readonly<Record<WorkerState, readonly WorkerState[]>> = {
  starting: ['running', 'failed'],
  running: ['recovering', 'stopping', 'failed'],
  recovering: ['recovering', 'running', 'stopping', 'failed'],
  stopping: ['stopped', 'failed'],
  stopped: [],
  failed: ['failed'],
};

/** A lifecycle change the table does not list: a defect of the runtime. */
export class IllegalWorkerTransition extends HamstringError {
  override readonly name = 'IllegalWorkerTransition';
  readonly code = 'WORKER_TRANSITION_ILLEGAL';
  constructor(
    readonly from: WorkerState,
    readonly to: WorkerState,
  ) {
    super(`worker: ${from} -> ${to} is illegal`);
  }
}

/**
 * The one owner of the worker's state (what status and readiness report), of the stop request and
 * of the failure reason. Every change goes through {@link WORKER_LIFECYCLE}.
 */
export class WorkerLifecycle {
  #state: WorkerState = 'starting';
  #stopRequested = false;
  #failure: string | undefined;

  constructor(private readonly log: Pick<Logger, 'error'>) {}

  get state(): WorkerState {
    return this.#state;
  }

  /** No new fetches: the loop ends after its current step (a stop, or a failure). */
  get stopRequested(): boolean {
    return this.#stopRequested;
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  requestStop(): void {
    this.#stopRequested = true;
  }

  /** The clients are up (or their reconnect loop has begun): the loop runs. */
  started(): void {
    this.#to('running');
  }

  recovering(): void {
    this.#to('recovering');
  }

  /** A commit returned: a recovery under way has succeeded. */
  committed(): void {
    if (this.#state === 'recovering') this.#to('running');
  }

  /** The loop ended; a failed worker stays failed. */
  stopping(): void {
    if (this.#state !== 'failed') this.#to('stopping');
  }

  /** The clients are closed; a failed worker stays failed. */
  stopped(): void {
    if (this.#state !== 'failed') this.#to('stopped');
  }

  /** Stops the worker for good: not live, the reason in its status. */
  fail(reason: string): void {
    this.#to('failed');
    this.#failure = reason;
    this.#stopRequested = true;
    this.log.error({ event: 'failed', reason }, `worker stopped: ${reason}`);
  }

  #to(next: WorkerState): void {
    if (!WORKER_LIFECYCLE[this.#state].includes(next)) throw new IllegalWorkerTransition(this.#state, next);
    this.#state = next;
  }
}
