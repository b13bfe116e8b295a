import type { RecordPosition } from '../stage.ts';

export interface FailureHistory {
  attempts: number;
  firstFailure: number;
  lastFailure: number;
}

const key = (p: RecordPosition) => `${p.topic}:${p.partition}@${p.offset}`;

/**
 * Failed attempts per record position, in memory: survives consumer resets and rebalances within
 * the process (crashes and stalls are counted durably by the delivery markers instead). The
 * settlement decision reads it; only a committed settlement writes it, so a batch settled twice
 * (its outputs refused, its commit failed) counts its failures once.
 */
export class FailureTracker {
  readonly #history = new Map<string, FailureHistory>();

  get(position: RecordPosition): FailureHistory | undefined {
    return this.#history.get(key(position));
  }

  /** The record failed again and waits for its retry. */
  remember(position: RecordPosition, history: FailureHistory): void {
    this.#history.set(key(position), history);
  }

  /** The record is done (committed or dead-lettered). */
  forget(position: RecordPosition): void {
    // Called for every committed record; only the rare failed one has a history to drop.
    if (this.#history.size > 0) this.#history.delete(key(position));
  }
}
