import type { RecordPosition } from '../stage.ts';

export interface FailureHistory {
  attempts: number;
  firstFailure: number;
  lastFailure: number;
}

const key = (p: RecordPosition) => `${p.topic}:${p.partition}@${p.offset}`;

/**
 * Failed attempts per record position, in memory: survives consumer resets and rebalances within
 * the process (crashes and stalls are counted durably by the delivery markers instead).
 */
export class FailureTracker {
  readonly #history = new Map<string, FailureHistory>();

  fail(position: RecordPosition, now: number): FailureHistory {
    const prev = this.#history.get(key(position));
    const next = prev
      ? { attempts: prev.attempts + 1, firstFailure: prev.firstFailure, lastFailure: now }
      : { attempts: 1, firstFailure: now, lastFailure: now };
    this.#history.set(key(position), next);
    return next;
  }

  get(position: RecordPosition): FailureHistory | undefined {
    return this.#history.get(key(position));
  }

  /** The record is done (committed or dead-lettered). */
  forget(position: RecordPosition): void {
    // Called for every committed record; only the rare failed one has a history to drop.
    if (this.#history.size > 0) this.#history.delete(key(position));
  }
}
