/**
 * Levenshtein edit distance (insertions, deletions, substitutions cost 1). A common prefix and
 * suffix cost nothing and are cut first (names of one tunnel share headers and zone labels), and
 * the rows are typed arrays reused across calls: a window of ten 200-character names is 45 such
 * distances per request.
 */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const n = endA - start;
  const m = endB - start;
  if (n === 0) return m;
  if (m === 0) return n;
  if (rows.length < m + 1) rows = new Uint32Array(2 * (m + 1));
  let previous = rows.subarray(0, m + 1);
  let current = rows.subarray(m + 1, 2 * (m + 1));
  for (let j = 0; j <= m; j += 1) previous[j] = j;
  for (let i = 1; i <= n; i += 1) {
    current[0] = i;
    const ca = a.charCodeAt(start + i - 1);
    for (let j = 1; j <= m; j += 1) {
      const cost = ca === b.charCodeAt(start + j - 1) ? 0 : 1;
      const del = (previous[j] as number) + 1;
      const ins = (current[j - 1] as number) + 1;
      const sub = (previous[j - 1] as number) + cost;
      current[j] = del < ins ? (del < sub ? del : sub) : ins < sub ? ins : sub;
    }
    const swap = previous;
    previous = current;
    current = swap;
  }
  return previous[m] as number;
}

let rows = new Uint32Array(2 * 256);

/** 1 for equal strings, 0 for strings with nothing in common: 1 - distance / longer length. */
export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - levenshtein(a, b) / longer;
}

/**
 * Consecutive requests of a window share all pairs but those of the newest subdomain, so the
 * similarities of recent pairs are kept (least recently used out first): 9 new distances per
 * request of a full window instead of 45. The results are those of {@link similarity}.
 */
const PAIR_CACHE_SIZE = 16_384;
const pairCache = new Map<string, number>();

function cachedSimilarity(a: string, b: string): number {
  const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
  const hit = pairCache.get(key);
  if (hit !== undefined) {
    pairCache.delete(key);
    pairCache.set(key, hit);
    return hit;
  }
  const value = similarity(a, b);
  pairCache.set(key, value);
  if (pairCache.size > PAIR_CACHE_SIZE) pairCache.delete(pairCache.keys().next().value as string);
  return value;
}

/** What the Domainator measures over one window of subdomains of a second-level domain. */
export interface WindowFeatures {
  /** Mean subdomain length. */
  readonly meanLength: number;
  /** Mean Shannon entropy (bits per character) of the subdomains. */
  readonly meanEntropy: number;
  /** Distinct subdomains / subdomains. */
  readonly distinctRatio: number;
  /** Mean pairwise similarity of the subdomains (1 - normalised edit distance). */
  readonly meanSimilarity: number;
}

export function windowFeatures(subdomains: readonly string[]): WindowFeatures {
  const n = subdomains.length;
  if (n === 0) return { meanLength: 0, meanEntropy: 0, distinctRatio: 0, meanSimilarity: 1 };
  let length = 0;
  let entropy = 0;
  for (const s of subdomains) {
    length += s.length;
    entropy += shannonEntropy(s);
  }
  let pairs = 0;
  let sim = 0;
  for (let i = 0; i < n; i += 1)
    for (let j = i + 1; j < n; j += 1) {
      sim += cachedSimilarity(subdomains[i] ?? '', subdomains[j] ?? '');
      pairs += 1;
    }
  return {
    meanLength: length / n,
    meanEntropy: entropy / n,
    distinctRatio: new Set(subdomains).size / n,
    meanSimilarity: pairs === 0 ? 1 : sim / pairs,
  };
}

/** Mean subdomain length at which the length evidence is full: data needs room to travel. */
export const FULL_LENGTH = 40;
/** Entropy (bits/char) at which the randomness evidence is full: base32/base64/hex payloads. */
export const FULL_ENTROPY = 4;

/**
 * Tunnelling score in 0..1. Exfiltration and tunnels put data into many long, distinct, random
 * subdomains of one domain; benign traffic repeats a few short host names (`www`, `mail`) or uses
 * short generated labels (CDN edges). The length evidence multiplies the rest, so short labels
 * never score high however random they look:
 *
 *   score = min(1, meanLength / 40) * mean(min(1, meanEntropy / 4), distinctRatio, 1 - meanSimilarity)
 */
export function tunnellingScore(f: WindowFeatures): number {
  const length = lengthFactor(f.meanLength);
  const randomness = Math.min(1, f.meanEntropy / FULL_ENTROPY);
  return (length * (randomness + f.distinctRatio + (1 - f.meanSimilarity))) / 3;
}

function lengthFactor(meanLength: number): number {
  return Math.min(1, meanLength / FULL_LENGTH);
}

/**
 * The length evidence of a window, an upper bound of its {@link tunnellingScore} (the factor it
 * multiplies is a mean of three values in 0..1), from the subdomains' lengths alone.
 */
export function lengthEvidence(subdomains: readonly string[]): number {
  if (subdomains.length === 0) return 0;
  let length = 0;
  for (const s of subdomains) length += s.length;
  return lengthFactor(length / subdomains.length);
}

/** Shannon entropy in bits per character of the string's character distribution; 0 for ''. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const n = [...text].length;
  let h = 0;
  for (const count of counts.values()) {
    const p = count / n;
    h -= p * Math.log2(p);
  }
  return h;
}
