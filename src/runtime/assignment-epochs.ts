import type { TopicPartition } from '../kafka/records.ts';
import { tpKey } from '../kafka/records.ts';

export type EpochCause = 'assign' | 'revoke' | 'lost' | 'reset';

/**
 * Local assignment epochs (docs/recovery.md, "Assignment epochs"). Assign starts a new epoch; revoke and lost
 * invalidate the current one. A batch may open a transaction only if every record was fetched under
 * the current epoch from a partition that is still assigned.
 */
export class AssignmentEpochs {
  #epoch = 0;
  readonly #assigned = new Map<string, TopicPartition>();
  readonly #listeners = new Set<(cause: EpochCause, partitions: TopicPartition[]) => void>();

  get current(): number {
    return this.#epoch;
  }

  assigned(): TopicPartition[] {
    return [...this.#assigned.values()];
  }

  isAssigned(tp: TopicPartition): boolean {
    return this.#assigned.has(tpKey(tp));
  }

  /** Called on every change, e.g. to abort in-flight work. */
  onChange(fn: (cause: EpochCause, partitions: TopicPartition[]) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  assign(partitions: TopicPartition[]): void {
    for (const tp of partitions) this.#assigned.set(tpKey(tp), tp);
    this.#bump('assign', partitions);
  }

  revoke(partitions: TopicPartition[]): void {
    for (const tp of partitions) this.#assigned.delete(tpKey(tp));
    this.#bump('revoke', partitions);
  }

  lost(partitions: TopicPartition[]): void {
    for (const tp of partitions) this.#assigned.delete(tpKey(tp));
    this.#bump('lost', partitions);
  }

  /** A fresh consumer starts with nothing assigned and a new epoch. */
  reset(): void {
    const had = this.assigned();
    this.#assigned.clear();
    this.#bump('reset', had);
  }

  /**
   * Why a batch fetched under `epoch` may not commit, or undefined when it may.
   * Records of a partition no longer assigned make the whole batch stale.
   */
  staleReason(epoch: number, partitions: Iterable<TopicPartition>): string | undefined {
    if (epoch !== this.#epoch) return `fetched under epoch ${epoch}, current epoch ${this.#epoch}`;
    for (const tp of partitions)
      if (!this.isAssigned(tp)) return `partition ${tpKey(tp)} is no longer assigned`;
    return undefined;
  }

  #bump(cause: EpochCause, partitions: TopicPartition[]): void {
    this.#epoch += 1;
    for (const fn of this.#listeners) fn(cause, partitions);
  }
}
