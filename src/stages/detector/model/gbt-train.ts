import type { GbtModel, TreeNode } from './gbt.ts';
import { sigmoid } from './gbt.ts';

/** Hyper-parameters of {@link trainGbt}. */
export interface GbtTrainOptions {
  rounds: number;
  learningRate: number;
  maxDepth: number;
  /** Candidate thresholds per feature (quantiles of the training values). */
  maxBins: number;
  /** L2 regularisation of leaf values. */
  lambda: number;
  /** Smallest hessian sum a child may have (avoids leaves fitted to a handful of samples). */
  minChildWeight: number;
  /**
   * Per feature, the direction the score must move in as the feature grows: 1 up, -1 down, 0
   * free. A feature with an obvious direction (less like benign text is never more benign) cannot
   * then be used for a shape one family happened to have, which is what fails on unseen families.
   */
  monotone?: readonly number[];
}

export const DEFAULT_GBT_OPTIONS: GbtTrainOptions = {
  rounds: 200,
  learningRate: 0.2,
  maxDepth: 5,
  maxBins: 48,
  lambda: 1,
  minChildWeight: 2,
};

/**
 * Candidate split thresholds per feature: midpoints between distinct values, thinned to at most
 * `maxBins` by quantile. Deterministic for the same data.
 */
function thresholdsOf(column: Float64Array, maxBins: number): Float64Array {
  const sorted = Float64Array.from(column).sort();
  const distinct: number[] = [];
  for (const v of sorted) if (distinct.length === 0 || distinct[distinct.length - 1] !== v) distinct.push(v);
  const mids: number[] = [];
  for (let i = 1; i < distinct.length; i += 1) mids.push(((distinct[i - 1] ?? 0) + (distinct[i] ?? 0)) / 2);
  if (mids.length <= maxBins) return Float64Array.from(mids);
  const picked: number[] = [];
  for (let b = 1; b <= maxBins; b += 1) {
    const v = sorted[Math.min(sorted.length - 1, Math.floor((b * sorted.length) / (maxBins + 1)))] ?? 0;
    // Midpoint just above v, so v itself goes left.
    const next = distinct.find((d) => d > v);
    if (next === undefined) continue;
    const t = (v + next) / 2;
    if (picked.length === 0 || (picked[picked.length - 1] ?? -Infinity) < t) picked.push(t);
  }
  return Float64Array.from(picked);
}

/** Index of the first threshold >= v (= the bin of v; thresholds.length means "above all"). */
function binOf(thresholds: Float64Array, v: number): number {
  let lo = 0;
  let hi = thresholds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((thresholds[mid] ?? Infinity) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Split {
  feature: number;
  bin: number;
  gain: number;
  /** The children's leaf values, for passing monotone bounds down. */
  left: number;
  right: number;
}

/** Leaf value within the bounds monotone constraints set for this node. */
function leafValue(G: number, H: number, lambda: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, -G / (H + lambda)));
}

/**
 * Trains a gradient-boosted tree ensemble with logistic loss on binned features (second-order
 * gradient boosting, as in XGBoost's "hist" method, without sampling, so the result depends on the
 * data and options only). `rows[i]` is a feature vector, `labels[i]` 1 for malicious.
 */
export function trainGbt(
  rows: readonly Float64Array[],
  labels: readonly number[],
  featureNames: readonly string[],
  options: GbtTrainOptions = DEFAULT_GBT_OPTIONS,
  weights?: readonly number[],
): GbtModel {
  const n = rows.length;
  const d = featureNames.length;
  if (n === 0 || labels.length !== n) throw new RangeError('training needs one label per row');
  if (weights && weights.length !== n) throw new RangeError('training needs one weight per row');
  const monotone = options.monotone ?? [];
  const thresholds: Float64Array[] = [];
  const bins: Uint16Array[] = [];
  for (let f = 0; f < d; f += 1) {
    const column = Float64Array.from(rows, (r) => r[f] ?? 0);
    const t = thresholdsOf(column, options.maxBins);
    thresholds.push(t);
    bins.push(Uint16Array.from(column, (v) => binOf(t, v)));
  }
  const weightOf = (i: number): number => (weights ? (weights[i] ?? 0) : 1);
  let positives = 0;
  let total = 0;
  for (let i = 0; i < n; i += 1) {
    positives += (labels[i] ?? 0) * weightOf(i);
    total += weightOf(i);
  }
  const prior = Math.min(Math.max(positives / total, 1e-6), 1 - 1e-6);
  const baseScore = Math.log(prior / (1 - prior));
  const margin = new Float64Array(n).fill(baseScore);
  const grad = new Float64Array(n);
  const hess = new Float64Array(n);
  const trees: TreeNode[][] = [];

  const bestSplit = (index: Uint32Array, lo: number, hi: number): Split | undefined => {
    let G = 0;
    let H = 0;
    for (const i of index) {
      G += grad[i] ?? 0;
      H += hess[i] ?? 0;
    }
    const parent = (G * G) / (H + options.lambda);
    let best: Split | undefined;
    for (let f = 0; f < d; f += 1) {
      const nb = (thresholds[f]?.length ?? 0) + 1;
      if (nb < 2) continue;
      const hg = new Float64Array(nb);
      const hh = new Float64Array(nb);
      const column = bins[f] as Uint16Array;
      for (const i of index) {
        const b = column[i] ?? 0;
        hg[b] = (hg[b] ?? 0) + (grad[i] ?? 0);
        hh[b] = (hh[b] ?? 0) + (hess[i] ?? 0);
      }
      let GL = 0;
      let HL = 0;
      for (let b = 0; b < nb - 1; b += 1) {
        GL += hg[b] ?? 0;
        HL += hh[b] ?? 0;
        const GR = G - GL;
        const HR = H - HL;
        if (HL < options.minChildWeight || HR < options.minChildWeight) continue;
        const gain = (GL * GL) / (HL + options.lambda) + (GR * GR) / (HR + options.lambda) - parent;
        if (gain <= 1e-9 || (best !== undefined && gain <= best.gain)) continue;
        const left = leafValue(GL, HL, options.lambda, lo, hi);
        const right = leafValue(GR, HR, options.lambda, lo, hi);
        const direction = monotone[f] ?? 0;
        if (direction * (right - left) < 0) continue;
        best = { feature: f, bin: b, gain, left, right };
      }
    }
    return best;
  };

  for (let round = 0; round < options.rounds; round += 1) {
    for (let i = 0; i < n; i += 1) {
      const p = sigmoid(margin[i] ?? 0);
      const w = weightOf(i);
      grad[i] = (p - (labels[i] ?? 0)) * w;
      hess[i] = Math.max(p * (1 - p), 1e-12) * w;
    }
    const tree: TreeNode[] = [];
    const leafOf = new Float64Array(n);
    // `lo`/`hi`: the leaf values monotone constraints allow below this node (XGBoost's scheme:
    // a constrained split caps the left subtree and floors the right one at the children's mean).
    const grow = (index: Uint32Array, depth: number, lo: number, hi: number): number => {
      const at = tree.length;
      tree.push([-1, 0]);
      const split = depth < options.maxDepth ? bestSplit(index, lo, hi) : undefined;
      if (!split) {
        let G = 0;
        let H = 0;
        for (const i of index) {
          G += grad[i] ?? 0;
          H += hess[i] ?? 0;
        }
        const value = leafValue(G, H, options.lambda, lo, hi);
        tree[at] = [-1, value];
        for (const i of index) leafOf[i] = value;
        return at;
      }
      const column = bins[split.feature] as Uint16Array;
      const left = index.filter((i) => (column[i] ?? 0) <= split.bin);
      const right = index.filter((i) => (column[i] ?? 0) > split.bin);
      const threshold = thresholds[split.feature]?.[split.bin] ?? 0;
      const direction = monotone[split.feature] ?? 0;
      const mid = (split.left + split.right) / 2;
      // Increasing: the left subtree stays at or below `mid`, the right at or above; decreasing: the reverse.
      const l = grow(
        left,
        depth + 1,
        direction < 0 ? Math.max(lo, mid) : lo,
        direction > 0 ? Math.min(hi, mid) : hi,
      );
      const r = grow(
        right,
        depth + 1,
        direction > 0 ? Math.max(lo, mid) : lo,
        direction < 0 ? Math.min(hi, mid) : hi,
      );
      tree[at] = [split.feature, threshold, l, r];
      return at;
    };
    grow(
      Uint32Array.from({ length: n }, (_, i) => i),
      0,
      -Infinity,
      Infinity,
    );
    for (let i = 0; i < n; i += 1) margin[i] = (margin[i] ?? 0) + options.learningRate * (leafOf[i] ?? 0);
    trees.push(tree);
  }
  return {
    format: 'hamstring-gbt/1',
    features: [...featureNames],
    base_score: baseScore,
    learning_rate: options.learningRate,
    trees,
  };
}
