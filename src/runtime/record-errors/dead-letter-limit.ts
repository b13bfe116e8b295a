/**
 * Trips when dead letters are no longer the exception: more than `maxShare` of the last `window`
 * records, or `maxConsecutive` in a row. A worker that trips stops instead of emptying its input
 * topic into the DLT (a bad deployment or a broken dependency looks exactly like that).
 */
export class DeadLetterLimit {
  #recent: boolean[] = [];
  #consecutive = 0;

  constructor(private readonly limit: { maxShare: number; window: number; maxConsecutive: number }) {}

  /** Records one batch's outcomes; returns why the limit is exceeded, or undefined. */
  record(outcomes: readonly boolean[]): string | undefined {
    for (const deadLettered of outcomes) {
      this.#consecutive = deadLettered ? this.#consecutive + 1 : 0;
      this.#recent.push(deadLettered);
    }
    if (this.#recent.length > this.limit.window) this.#recent = this.#recent.slice(-this.limit.window);
    if (this.#consecutive >= this.limit.maxConsecutive) {
      return `${this.#consecutive} consecutive records dead-lettered (limit ${this.limit.maxConsecutive})`;
    }
    const share = this.#recent.filter(Boolean).length / this.#recent.length;
    // Half a window must be seen first, so one bad record at start-up cannot trip a share limit.
    if (this.#recent.length >= this.limit.window / 2 && share > this.limit.maxShare) {
      return `${Math.round(share * 100)}% of the last ${this.#recent.length} records dead-lettered (limit ${Math.round(this.limit.maxShare * 100)}%)`;
    }
    return undefined;
  }
}
