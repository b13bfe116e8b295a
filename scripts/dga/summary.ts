/** The figures of a cross-validation at one operating threshold (pure). */
import type { CrossValidation, HeldOut } from './cross-validate.ts';
import { precisionAtBase, rateAt, roc, thresholdForFpr, type RocPoint } from './metrics.ts';

export interface FamilyRow {
  readonly family: string;
  readonly kind: string;
  readonly structure: string;
  readonly names: number;
  readonly recall: number;
  readonly recallBehindWww: number;
  readonly recallAtHalf: number;
}

export interface SourceRow {
  readonly source: string;
  readonly origin: string;
  readonly names: number;
  readonly fpr: number;
  readonly fprAtHalf: number;
  readonly examples: string[];
}

export interface Summary {
  readonly fprBudget: number;
  readonly threshold: number;
  /** The threshold was given (e.g. the shipped config's), not chosen for the FPR budget. */
  readonly thresholdGiven: boolean;
  readonly families: FamilyRow[];
  readonly sources: SourceRow[];
  /** Mean of the families' held-out recall, split by character-based and dictionary families. */
  readonly meanRecall: { all: number; character: number; dictionary: number };
  readonly pooled: { tpr: number; fpr: number; realFpr: number };
  readonly precision: { base1: number; base01: number };
  readonly roc: { curve: RocPoint[]; auc: number };
}

const isDictionary = (kind: string): boolean => kind === 'wordlist';
const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Picks the threshold whose false-positive rate on the held-out REAL benign names is within
 * `fprBudget`, then measures every family and source at it.
 */
export function summarise(
  cv: Pick<CrossValidation, 'heldOut'>,
  o: {
    fprBudget: number;
    structureOf: (family: string) => string;
    originOf: (source: string) => string;
    threshold?: number;
  },
): Summary {
  const benign = cv.heldOut.filter((h) => h.sample.malicious === 0);
  const dga = cv.heldOut.filter((h) => h.sample.malicious === 1);
  const real = benign.filter((h) => o.originOf(h.sample.source) === 'real');
  const threshold =
    o.threshold ??
    thresholdForFpr(
      real.map((h) => h.score),
      o.fprBudget,
    );
  const group = (items: HeldOut[], key: (h: HeldOut) => string): Map<string, HeldOut[]> => {
    const out = new Map<string, HeldOut[]>();
    for (const h of items) out.set(key(h), [...(out.get(key(h)) ?? []), h]);
    return out;
  };
  const families = [...group(dga, (h) => h.sample.family)]
    .map(([family, hs]): FamilyRow => {
      const kind = hs[0]?.sample.kind ?? '';
      return {
        family,
        kind,
        structure: o.structureOf(family),
        names: hs.length,
        recall: rateAt(
          hs.map((h) => h.score),
          threshold,
        ),
        recallBehindWww: rateAt(
          hs.map((h) => h.wwwScore ?? 0),
          threshold,
        ),
        recallAtHalf: rateAt(
          hs.map((h) => h.score),
          0.5,
        ),
      };
    })
    .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.family < b.family ? -1 : 1));
  const sources = [...group(benign, (h) => h.sample.source)].map(([source, hs]): SourceRow => ({
    source,
    origin: o.originOf(source),
    names: hs.length,
    fpr: rateAt(
      hs.map((h) => h.score),
      threshold,
    ),
    fprAtHalf: rateAt(
      hs.map((h) => h.score),
      0.5,
    ),
    examples: hs
      .filter((h) => h.score >= threshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, 5)
      .map((h) => h.sample.domain),
  }));
  const tpr = mean(families.map((f) => f.recall));
  const fpr = rateAt(
    benign.map((h) => h.score),
    threshold,
  );
  const realFpr = rateAt(
    real.map((h) => h.score),
    threshold,
  );
  return {
    fprBudget: o.fprBudget,
    threshold,
    thresholdGiven: o.threshold !== undefined,
    families,
    sources,
    meanRecall: {
      all: tpr,
      character: mean(families.filter((f) => !isDictionary(f.kind)).map((f) => f.recall)),
      dictionary: mean(families.filter((f) => isDictionary(f.kind)).map((f) => f.recall)),
    },
    pooled: { tpr, fpr, realFpr },
    precision: { base1: precisionAtBase(tpr, realFpr, 0.01), base01: precisionAtBase(tpr, realFpr, 0.001) },
    roc: roc(
      real.map((h) => h.score),
      dga.map((h) => h.score),
    ),
  };
}
