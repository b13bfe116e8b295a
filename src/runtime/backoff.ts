/**
 * Back-off policies as small pure functions: `delay(attempt)` gives the wait before retry number
 * `attempt` (1-based), or undefined when no retry is left.
 */
export type BackOff = (attempt: number, elapsedMs: number) => number | undefined;

export function fixedBackOff(intervalMs: number, maxAttempts = Infinity): BackOff {
  return (attempt) => (attempt > maxAttempts ? undefined : intervalMs);
}

export interface ExponentialOptions {
  initialMs: number;
  multiplier: number;
  maxIntervalMs: number;
  /** Give up once this much time has passed since the first failure. */
  maxElapsedMs?: number;
  maxAttempts?: number;
  /** 0..1: each delay is drawn from [d*(1-jitter), d]. */
  jitter?: number;
  random?: () => number;
}

export function exponentialBackOff(o: ExponentialOptions): BackOff {
  const random = o.random ?? Math.random;
  return (attempt, elapsedMs) => {
    if (attempt > (o.maxAttempts ?? Infinity)) return undefined;
    if (o.maxElapsedMs !== undefined && elapsedMs >= o.maxElapsedMs) return undefined;
    const base = Math.min(o.maxIntervalMs, o.initialMs * o.multiplier ** (attempt - 1));
    const jitter = o.jitter ?? 0;
    return Math.round(base * (1 - jitter * random()));
  };
}
