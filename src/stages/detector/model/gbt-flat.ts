import type { GbtModel } from './gbt.ts';

/**
 * A tree ensemble laid out in typed arrays for scoring: every node of every tree in one set of
 * columns, children as absolute indexes. The stored form (nested JSON arrays, see {@link GbtModel})
 * is what the checksum covers; walking it costs a polymorphic array access per level, which made
 * the trees, not the features, the larger share of a name's scoring time.
 */
export interface FlatGbt {
  readonly base: number;
  readonly rate: number;
  /** Index of each tree's root node. */
  readonly roots: Int32Array;
  /** Split feature, or -1 for a leaf. */
  readonly feature: Int32Array;
  /** Split threshold, or the leaf value. */
  readonly value: Float64Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
}

/** Lays a validated ensemble out flat (see {@link FlatGbt}); scores are identical to the stored form's. */
export function flattenGbt(model: GbtModel): FlatGbt {
  const size = model.trees.reduce((sum, t) => sum + t.length, 0);
  const roots = new Int32Array(model.trees.length);
  const feature = new Int32Array(size);
  const value = new Float64Array(size);
  const left = new Int32Array(size);
  const right = new Int32Array(size);
  let offset = 0;
  model.trees.forEach((tree, t) => {
    roots[t] = offset;
    tree.forEach((node, n) => {
      const at = offset + n;
      value[at] = node[1];
      if (node[0] === -1) {
        feature[at] = -1;
        return;
      }
      const [f, , l, r] = node as [number, number, number, number];
      feature[at] = f;
      left[at] = offset + l;
      right[at] = offset + r;
    });
    offset += tree.length;
  });
  return { base: model.base_score, rate: model.learning_rate, roots, feature, value, left, right };
}

/** The ensemble's raw score (log-odds) of one feature vector, as `gbtMargin` computes it. */
export function flatMargin(g: FlatGbt, x: Float64Array): number {
  const { roots, feature, value, left, right } = g;
  let sum = 0;
  for (let t = 0; t < roots.length; t += 1) {
    let node = roots[t] ?? 0;
    let f = feature[node] ?? -1;
    while (f >= 0) {
      node = (x[f] ?? 0) <= (value[node] ?? 0) ? (left[node] ?? 0) : (right[node] ?? 0);
      f = feature[node] ?? -1;
    }
    sum += value[node] ?? 0;
  }
  return g.base + g.rate * sum;
}
