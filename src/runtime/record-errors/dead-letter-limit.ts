/**
 * Trips when dead letters are no longer the exception: more than `maxShare` of the last `window`
 * records, or `maxConsecutive` in a row. A worker that trips stops instead of emptying its input
 * topic into the DLT (a bad deployment or a broken dependency looks exactly like that).
 *
 * `check` asks before a batch commits and changes nothing; `record` counts a batch once it
 * committed, so a batch settled twice (a commit refused, a rewind) is not counted twice.
 */
export class DeadLetterLimit {
  #recent: boolean[] = [];
  #consecutive = 0;

  constructor(private readonly limit: { maxShare: number; window: number; maxConsecutive: number }) {}

  /** Why recording these outcomes would exceed the limit, or undefined; changes nothing. */
  check(outcomes: readonly boolean[]): string | undefined {
    return this.#judge(this.#after(outcomes));
  }

  /** Records one committed batch's outcomes; returns why the limit is now exceeded, or undefined. */
  record(outcomes: readonly boolean[]): string | undefined {
    const next = this.#after(outcomes);
    this.#recent = next.recent;
    this.#consecutive = next.consecutive;
    return this.#judge(next);
  }

  #after(outcomes: readonly boolean[]): { recent: boolean[]; consecutive: number } {
    let consecutive = this.#consecutive;
    const recent = [...this.#recent];
    for (const deadLettered of outcomes) {
      consecutive = deadLettered ? consecutive + 1 : 0;
      recent.push(deadLettered);
    }
    return {
      recent: recent.length > this.limit.window ? recent.slice(-this.limit.window) : recent,
      consecutive,
    };
  }

  #judge({ recent, consecutive }: { recent: boolean[]; consecutive: number }): string | undefined {
    if (consecutive >= this.limit.maxConsecutive) {
      return `${consecutive} consecutive records dead-lettered (limit ${this.limit.maxConsecutive})`;
    }
    const share = recent.filter(Boolean).length / recent.length;
    // Half a window must be seen first, so one bad record at start-up cannot trip a share limit.
    if (recent.length >= this.limit.window / 2 && share > this.limit.maxShare) {
      return `${Math.round(share * 100)}% of the last ${recent.length} records dead-lettered (limit ${Math.round(this.limit.maxShare * 100)}%)`;
    }
    return undefined;
  }
}
