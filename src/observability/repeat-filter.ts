/** What the filter decides for one log line. */
export type RepeatDecision = { emit: false } | { emit: true; suppressed: number; sinceMs?: number };

export interface RepeatFilterOptions {
  /** An identical line is written at most once per this many milliseconds. */
  intervalMs: number;
  /** Distinct lines remembered; the oldest are forgotten beyond it (bounded memory). */
  maxKeys: number;
  now: () => number;
}

/**
 * Rate-limits identical log lines: the first is written, repeats within `intervalMs` are counted
 * instead, and the next one written after the interval carries the count. A worker stuck in a
 * failure loop then writes one line per interval and per distinct failure, not thousands a second,
 * and the count still says how often it happened.
 */
export class RepeatFilter {
  readonly #seen = new Map<string, { writtenAt: number; suppressed: number; firstSuppressedAt: number }>();

  constructor(private readonly o: RepeatFilterOptions) {}

  decide(key: string): RepeatDecision {
    const now = this.o.now();
    const entry = this.#seen.get(key);
    if (entry && now - entry.writtenAt < this.o.intervalMs) {
      if (entry.suppressed === 0) entry.firstSuppressedAt = now;
      entry.suppressed += 1;
      return { emit: false };
    }
    this.#seen.delete(key);
    this.#seen.set(key, { writtenAt: now, suppressed: 0, firstSuppressedAt: 0 });
    if (this.#seen.size > this.o.maxKeys) this.#seen.delete(this.#seen.keys().next().value!);
    if (!entry || entry.suppressed === 0) return { emit: true, suppressed: 0 };
    return { emit: true, suppressed: entry.suppressed, sinceMs: now - entry.firstSuppressedAt };
  }
}

/**
 * The identity of a log line for the filter: level, message, and the fields that name what
 * happened (the logger's bindings such as stage and instance, event, error code and kind, operation,
 * topic, address), but not counters or timestamps, which differ between otherwise identical repeats.
 */
export function repeatKey(level: number, bindings: object, obj: unknown, msg: unknown): string {
  const o = typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>) : {};
  const err = typeof o.err === 'object' && o.err !== null ? (o.err as Record<string, unknown>) : {};
  const text = typeof obj === 'string' ? obj : msg;
  const parts = [level, text, o.event, err.code, err.kind, err.operation, o.topic, o.address];
  return `${JSON.stringify(bindings)}|${JSON.stringify(parts)}`;
}
