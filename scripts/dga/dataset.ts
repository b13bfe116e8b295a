/**
 * The labelled names the DGA model is trained and judged on: every benign source and every DGA
 * family, each sample tagged with where it came from, so a whole source or a whole family can be
 * held out.
 */
import { BENIGN_SOURCES } from '../../src/traffic/benign/index.ts';
import { DGA_FAMILIES, type DgaFamily } from '../../src/traffic/dga-families.ts';
import { seededRandom } from '../../src/traffic/random.ts';

export interface Sample {
  readonly domain: string;
  /** The DGA family, or `benign`. */
  readonly family: string;
  /** The family's kind (`arithmetic`, `wordlist`, ...), or `benign`. */
  readonly kind: string;
  /** The benign source, or the family's name again. */
  readonly source: string;
  readonly malicious: 0 | 1;
}

export interface DatasetOptions {
  readonly seed: number;
  /** Names per DGA family. */
  readonly perFamily: number;
  /** Names per benign source at most (a real list may hold fewer). */
  readonly perSource: number;
}

export const DEFAULT_DATASET: DatasetOptions = { seed: 20261201, perFamily: 600, perSource: 4000 };

/**
 * The names of one family: malware seeds and days drawn from `seed`, so training and evaluation
 * can ask for names of seeds the other never saw.
 */
export function familySamples(family: DgaFamily, seed: number, count: number): Sample[] {
  const random = seededRandom(seed).fork(`family:${family.name}`);
  const seeds = Array.from({ length: 6 }, () => random.int(1, 1_000_000));
  const out: Sample[] = [];
  for (let i = 0; i < count; i += 1) {
    const day = 19_000 + random.int(0, 1500);
    const domain = family.domain(seeds[i % seeds.length] ?? 1, day, random.int(0, 5000));
    out.push({ domain, family: family.name, kind: family.kind, source: family.name, malicious: 1 });
  }
  return out;
}

export function benignSamples(seed: number, perSource: number): Sample[] {
  return BENIGN_SOURCES.flatMap((source) =>
    source.names(seed, perSource).map((domain): Sample => ({
      domain,
      family: 'benign',
      kind: 'benign',
      source: source.name,
      malicious: 0,
    })),
  );
}

export function maliciousSamples(seed: number, perFamily: number): Sample[] {
  return DGA_FAMILIES.flatMap((family) => familySamples(family, seed, perFamily));
}
