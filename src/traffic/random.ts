/**
 * A seeded pseudo-random source: the same seed yields the same sequence on every machine, which is
 * what makes generated traffic, training data and the trained model reproducible. Not for secrets.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** A new independent source derived from this one and a label (e.g. one per host). */
  fork(label: string): Random;
}

/** 32-bit FNV-1a of a string: turns labels and seeds into PRNG state. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: small, fast, and good enough for simulation; full 2^32 period. */
export function seededRandom(seed: number | string): Random {
  let state = (typeof seed === 'string' ? fnv1a(seed) : seed) >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    chance: (p) => next() < p,
    fork: (label) => seededRandom(fnv1a(`${state}:${label}`)),
  };
  return random;
}

/**
 * Samples ranks 0..n-1 with probability proportional to 1/(rank+1)^s: a few popular names take
 * most requests, a long tail takes the rest, as in real DNS traffic.
 */
export function zipfSampler(n: number, s = 1.1): (random: Random) => number {
  if (n < 1) throw new RangeError('zipf over an empty range');
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i += 1) {
    total += 1 / Math.pow(i + 1, s);
    cumulative[i] = total;
  }
  return (random) => {
    const target = random.next() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] ?? total) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
