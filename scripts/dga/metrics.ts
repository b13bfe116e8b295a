/** Threshold, rate and curve arithmetic of the DGA evaluation (pure). */

/** Share of `scores` at or above `threshold`. */
export function rateAt(scores: readonly number[], threshold: number): number {
  if (scores.length === 0) return 0;
  let n = 0;
  for (const s of scores) if (s >= threshold) n += 1;
  return n / scores.length;
}

/**
 * The lowest threshold whose false-positive rate on `benign` is at most `budget`: the `k`-th
 * highest benign score nudged up, where `k` benign names may pass.
 */
export function thresholdForFpr(benign: readonly number[], budget: number): number {
  const sorted = [...benign].sort((a, b) => b - a);
  const allowed = Math.floor(budget * sorted.length);
  const above = sorted[allowed] ?? 0;
  // Everything strictly above the (allowed+1)-th highest score: at most `allowed` names.
  return Math.min(1, above + 1e-9);
}

/** Precision of a name flagged at the given rates when `base` of all names are malicious. */
export function precisionAtBase(tpr: number, fpr: number, base: number): number {
  const tp = tpr * base;
  const fp = fpr * (1 - base);
  return tp + fp === 0 ? 0 : tp / (tp + fp);
}

export interface RocPoint {
  readonly fpr: number;
  readonly tpr: number;
}

/** The ROC curve, thinned to at most `points` points, with its area. */
export function roc(
  benign: readonly number[],
  malicious: readonly number[],
  points = 400,
): { curve: RocPoint[]; auc: number } {
  const all = [...benign.map((s) => ({ s, m: 0 })), ...malicious.map((s) => ({ s, m: 1 }))].sort(
    (a, b) => b.s - a.s,
  );
  const curve: RocPoint[] = [{ fpr: 0, tpr: 0 }];
  let tp = 0;
  let fp = 0;
  let auc = 0;
  for (let i = 0; i < all.length; i += 1) {
    const item = all[i] as { s: number; m: number };
    if (item.m === 1) tp += 1;
    else {
      fp += 1;
      auc += tp / Math.max(1, malicious.length);
    }
    if (i === all.length - 1 || (all[i + 1]?.s ?? -1) !== item.s)
      curve.push({ fpr: fp / Math.max(1, benign.length), tpr: tp / Math.max(1, malicious.length) });
  }
  const step = Math.max(1, Math.ceil(curve.length / points));
  const thinned = curve.filter((_, i) => i % step === 0 || i === curve.length - 1);
  return { curve: thinned, auc: auc / Math.max(1, benign.length) };
}

/** Assigns names round-robin to `k` folds after sorting by `key`, so folds mix kinds evenly. */
export function foldsOf<T>(items: readonly T[], k: number, key: (t: T) => string): Map<T, number> {
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return new Map(sorted.map((item, i) => [item, i % k]));
}

export const pct = (x: number, digits = 2): string => `${(100 * x).toFixed(digits)} %`;
