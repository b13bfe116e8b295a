import { HamstringError } from '../errors/hamstring-error.ts';

/** Options of {@link pollUntil}. */
export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Builds the error thrown on deadline; gets the last error the check threw, if any. */
  onTimeout: (lastError: unknown) => Error;
}

/**
 * Calls `check` until it returns true or the deadline passes. A check that throws an
 * {@link AbortPoll} stops polling at once (a condition that can no longer become true, such as
 * a process that exited); other errors count as "not yet" and are kept for the timeout message.
 */
export async function pollUntil(check: () => boolean | Promise<boolean>, opts: PollOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const intervalMs = opts.intervalMs ?? 200;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      if (error instanceof AbortPoll) throw error.cause;
      lastError = error;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw opts.onTimeout(lastError);
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}

/** Thrown by a {@link pollUntil} check to stop polling and reject with `cause`. */
export class AbortPoll extends HamstringError {
  override readonly name = 'AbortPoll';
  readonly code = 'POLL_ABORTED';
  override readonly cause: Error;
  constructor(cause: Error) {
    super(cause.message);
    this.cause = cause;
  }
}
