import { shannonEntropy } from '../features.ts';

/** Levenshtein edit distance (insertions, deletions, substitutions cost 1). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** 1 for equal strings, 0 for strings with nothing in common: 1 - distance / longer length. */
export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - levenshtein(a, b) / longer;
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
      sim += similarity(subdomains[i] ?? '', subdomains[j] ?? '');
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
  const length = Math.min(1, f.meanLength / FULL_LENGTH);
  const randomness = Math.min(1, f.meanEntropy / FULL_ENTROPY);
  return (length * (randomness + f.distinctRatio + (1 - f.meanSimilarity))) / 3;
}
