import { z } from 'zod';
import { addProblem, asArray, asRecord } from './refinements.ts';
import { fraction, intBetween, positiveInt, positiveNumber } from './value-schemas.ts';

/** Inspector classes: the streaming-model inspector and the one that passes every batch on. */
export const INSPECTOR_CLASSES = ['StreamADInspector', 'NoInspector'] as const;

const sigma = () => positiveNumber().default(3);
const windowLen = () => intBetween(2, 100_000).default(50);

/**
 * The streaming models the inspector implements, by the Python (StreamAD) class name, with their
 * `model_args`. Every score is in [0, 1]; univariate deviations are in units of `sigma` spreads.
 */
export const UNIVARIATE_MODEL_ARGS = {
  /** |x - mean| / std of the previous `window_len` values (all values when `is_global`). */
  ZScoreDetector: z.strictObject({
    window_len: windowLen(),
    is_global: z.boolean().default(false),
    sigma: sigma(),
  }),
  /** |x - median| / (1.4826 MAD) of the previous `window_len` values. */
  MadDetector: z.strictObject({ window_len: windowLen(), sigma: sigma() }),
  /** Residual of an exponentially weighted mean over its exponentially weighted std. */
  EWMADetector: z.strictObject({ alpha: fraction().default(0.1), sigma: sigma() }),
} as const;

export const MULTIVARIATE_MODEL_ARGS = {
  /** Loda: seeded random projections, one histogram each over a sliding window. */
  LodaDetector: z.strictObject({
    window_len: intBetween(2, 100_000).default(256),
    projections: positiveInt(1000).default(10),
    bins: positiveInt(1000).default(10),
    seed: z.int({ error: 'integer' }).default(42),
  }),
} as const;

export const ENSEMBLE_ARGS = {
  /** Weighted mean of the models' scores; equal weights by default. */
  WeightEnsemble: z.strictObject({
    ensemble_weights: z.array(z.number({ error: 'number >= 0' }).min(0, { error: 'number >= 0' })).optional(),
  }),
  /** Share of the models whose score reaches `threshold`. */
  VoteEnsemble: z.strictObject({ threshold: fraction().default(0.8) }),
} as const;

export type UnivariateModelName = keyof typeof UNIVARIATE_MODEL_ARGS;
export type MultivariateModelName = keyof typeof MULTIVARIATE_MODEL_ARGS;
export type EnsembleName = keyof typeof ENSEMBLE_ARGS;

const names = (table: object) =>
  Object.keys(table)
    .map((name) => JSON.stringify(name))
    .join(', ');

/**
 * Checks an inspector's `models` and `ensemble` against its `mode` and each model's `model_args`;
 * reports every problem with its key path. Runs on the raw entry so problems are listed together.
 */
export function checkInspectorModels(inspector: unknown, ctx: z.RefinementCtx<unknown>): void {
  const entry = asRecord(inspector);
  if (!entry || entry.inspector_class_name === 'NoInspector') return;
  const mode = typeof entry.mode === 'string' ? entry.mode : 'univariate';
  const table: Record<string, z.ZodType> =
    mode === 'multivariate' ? MULTIVARIATE_MODEL_ARGS : UNIVARIATE_MODEL_ARGS;
  const models = asArray(entry.models);
  if (mode !== 'ensemble' && models.length !== 1) {
    addProblem(
      ctx,
      ['models'],
      `exactly one model (mode ${mode}; mode ensemble combines several)`,
      entry.models,
    );
  }
  models.forEach((model, index) => checkModel(ctx, ['models', index], model, table, `${mode} model`));
  if (mode === 'ensemble' && entry.ensemble !== undefined) {
    checkModel(ctx, ['ensemble'], entry.ensemble, ENSEMBLE_ARGS, 'ensemble');
    const weights = asRecord(asRecord(entry.ensemble)?.model_args)?.ensemble_weights;
    if (Array.isArray(weights) && weights.length !== models.length) {
      addProblem(
        ctx,
        ['ensemble', 'model_args', 'ensemble_weights'],
        `one weight per model (${models.length})`,
        weights,
      );
    }
  }
}

function checkModel(
  ctx: z.RefinementCtx<unknown>,
  path: readonly PropertyKey[],
  value: unknown,
  table: Record<string, z.ZodType>,
  what: string,
): void {
  const model = asRecord(value)?.model;
  if (typeof model !== 'string' || !Object.hasOwn(table, model)) {
    addProblem(ctx, [...path, 'model'], `${what} among ${names(table)}`, model);
    return;
  }
  const args = asRecord(value)?.model_args ?? {};
  const schema = table[model]!;
  const result = schema.safeParse(args);
  if (result.success) return;
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape).join(', ') : '';
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        addProblem(
          ctx,
          [...path, 'model_args', key],
          `an argument of ${model} (${known})`,
          asRecord(args)?.[key],
        );
      }
      continue;
    }
    const actual = issue.path.reduce<unknown>(
      (node, key) => asRecord(node)?.[key as string] ?? asArray(node)[key as number],
      args,
    );
    addProblem(ctx, [...path, 'model_args', ...issue.path], issue.message, actual);
  }
}
