/**
 * When each partition's timer is due next. A partition is scheduled once it is assigned and
 * restored, and unscheduled when it is revoked, lost or restored again: a timer never fires for a
 * partition that is being restored or not assigned. A call that comes late does not make up for the
 * intervals it missed: the next one is one interval after it.
 */
export class TimerSchedule {
  readonly #next = new Map<number, number>();

  constructor(readonly intervalMs: number) {
    if (!(intervalMs > 0)) throw new RangeError(`timer interval must be > 0 ms, got ${intervalMs}`);
  }

  start(partition: number, now: number): void {
    this.#next.set(partition, now + this.intervalMs);
  }

  stop(partition: number): void {
    this.#next.delete(partition);
  }

  /** Partitions due at `now`, the longest overdue first. */
  due(now: number): number[] {
    return [...this.#next]
      .filter(([, at]) => at <= now)
      .sort((a, b) => a[1] - b[1])
      .map(([p]) => p);
  }

  fired(partition: number, now: number): void {
    if (this.#next.has(partition)) this.#next.set(partition, now + this.intervalMs);
  }

  /** The earliest due time, or undefined when no partition is scheduled. */
  nextDueAt(): number | undefined {
    let min: number | undefined;
    for (const at of this.#next.values()) if (min === undefined || at < min) min = at;
    return min;
  }
}
