import { z } from 'zod';

/**
 * A node of a regression tree, as stored: a split `[feature, threshold, left, right]` (values
 * `<= threshold` go left; children are indexes into the tree's node array) or a leaf `[-1, value]`.
 */
export type TreeNode = [number, number, number, number] | [-1, number];

/**
 * A gradient-boosted tree ensemble for binary classification (logistic loss): the malicious
 * probability is `sigmoid(base_score + learning_rate * sum of leaf values)`.
 */
export interface GbtModel {
  readonly format: 'hamstring-gbt/1';
  /** Feature names in input order; a model is only valid for exactly these features. */
  readonly features: readonly string[];
  readonly base_score: number;
  readonly learning_rate: number;
  readonly trees: readonly (readonly TreeNode[])[];
  /** How it was trained (seed, data, metrics): provenance only, never read when scoring. */
  readonly training?: Record<string, unknown>;
}

const nodeSchema = z.union([
  z.tuple([z.literal(-1), z.number()]),
  z.tuple([z.int().nonnegative(), z.number(), z.int().positive(), z.int().positive()]),
]);

const modelSchema = z.strictObject({
  format: z.literal('hamstring-gbt/1'),
  features: z.array(z.string()).min(1),
  base_score: z.number(),
  learning_rate: z.number().positive(),
  trees: z.array(z.array(nodeSchema).min(1)),
  training: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Validates a parsed model file: shape, and that every split names a known feature and children
 * inside its tree that come after it (so scoring always ends at a leaf).
 */
export function parseGbtModel(json: unknown): GbtModel {
  const model = modelSchema.parse(json) as GbtModel;
  model.trees.forEach((tree, t) => {
    tree.forEach((node, n) => {
      if (node[0] === -1) return;
      const [feature, , left, right] = node as [number, number, number, number];
      if (feature >= model.features.length)
        throw new Error(`tree ${t} node ${n}: feature ${feature} out of range`);
      for (const child of [left, right])
        if (child <= n || child >= tree.length)
          throw new Error(`tree ${t} node ${n}: child ${child} out of range`);
    });
  });
  return model;
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** The model's raw score (log-odds) of one feature vector. */
export function gbtMargin(model: GbtModel, x: ArrayLike<number>): number {
  let sum = 0;
  for (const tree of model.trees) {
    // Index access, not destructuring: this loop runs per tree level for every scored name.
    let node = tree[0] as TreeNode;
    while (node[0] !== -1) {
      const split = node as [number, number, number, number];
      node = tree[(x[split[0]] ?? 0) <= split[1] ? split[2] : split[3]] as TreeNode;
    }
    sum += node[1];
  }
  return model.base_score + model.learning_rate * sum;
}

/** Malicious probability of one feature vector. */
export function gbtProbability(model: GbtModel, x: ArrayLike<number>): number {
  return sigmoid(gbtMargin(model, x));
}
