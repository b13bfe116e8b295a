import { parse } from 'tldts';
import { benignHostname, popularDomains, registeredDomains } from './benign-domains.ts';
import { DGA_FAMILIES } from './dga-families.ts';
import { seededRandom } from './random.ts';

/** One labelled name: `family` is `benign` or a DGA family's name. */
export interface LabelledDomain {
  readonly domain: string;
  readonly family: string;
  readonly malicious: 0 | 1;
}

export interface TrainingSplit {
  readonly train: LabelledDomain[];
  readonly test: LabelledDomain[];
}

export interface TrainingSetOptions {
  seed: number;
  /** Names per DGA family (split between training and test malware seeds). */
  perFamily: number;
  /** Benign names (split by registered domain). */
  benign: number;
}

/**
 * A labelled set of benign and DGA names, split so that the test half measures what matters in
 * deployment: benign names under registered domains never seen in training, and DGA names of
 * malware seeds (for dictionary families: word lists) never seen in training.
 */
export function dgaTrainingSet(o: TrainingSetOptions): TrainingSplit {
  const random = seededRandom(o.seed);
  const train: LabelledDomain[] = [];
  const test: LabelledDomain[] = [];

  const domains = [...new Set(registeredDomains().map((d) => d.toLowerCase()))].filter(
    (d) => parse(d).domain !== null,
  );
  const split = random.fork('benign-split');
  const testDomains = new Set(domains.filter(() => split.chance(0.25)));
  const names = random.fork('benign-names');
  // Popular domains are most of real traffic, so a fifth of the benign names are drawn from them.
  const popular = popularDomains().filter((d) => parse(d).domain !== null);
  for (let i = 0; i < o.benign; i += 1) {
    const base = names.chance(0.2) ? names.pick(popular) : names.pick(domains);
    const item: LabelledDomain = { domain: benignHostname(names, base), family: 'benign', malicious: 0 };
    (testDomains.has(base) ? test : train).push(item);
  }

  const trainSeeds = [11, 23, 37, 41];
  const testSeeds = [53, 67];
  const days = random.fork('days');
  for (const family of DGA_FAMILIES) {
    for (let i = 0; i < o.perFamily; i += 1) {
      const isTest = i % 4 === 0;
      const seeds = isTest ? testSeeds : trainSeeds;
      const seed = seeds[i % seeds.length] ?? 0;
      const day = 20_000 + days.int(0, 60);
      const item: LabelledDomain = { domain: family.domain(seed, day, i), family: family.name, malicious: 1 };
      (isTest ? test : train).push(item);
    }
  }
  return { train, test };
}
