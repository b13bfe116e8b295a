import type { Clock } from '../clock.ts';

/** Counts occurrences of keyed errors within a sliding window (fatal errors, identical `other` errors). */
export class RepeatedErrors {
  readonly #seen = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
  ) {}

  /** Records one occurrence; returns the occurrences of `key` within the window, this one included. */
  add(key: string): number {
    const now = this.clock.now();
    for (const k of this.#seen.keys()) if (k !== key) this.#recent(k, now);
    const times = [...this.#recent(key, now), now];
    this.#seen.set(key, times);
    return times.length;
  }

  count(key: string): number {
    return this.#recent(key, this.clock.now()).length;
  }

  #recent(key: string, now: number): number[] {
    const times = (this.#seen.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length === 0) this.#seen.delete(key);
    return times;
  }
}
