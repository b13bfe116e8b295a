import { z } from 'zod';
import { isInternetName } from '../internet-name.ts';
import { lexiconOf, storedLexiconSchema, type Lexicon, type StoredLexicon } from '../dga-features/lexicon.ts';
import { FEATURE_NAMES, domainFeatures } from '../dga-features/vector.ts';
import { parseGbtModel, sigmoid, type GbtModel } from './gbt.ts';
import { flatMargin, flattenGbt, type FlatGbt } from './gbt-flat.ts';

/**
 * A DGA model file: the classifier (malicious probability), one head per kind of DGA for
 * attribution, and the lexicon its features were computed with. One file, so its checksum vouches
 * for everything that decides a score.
 */
export interface DgaModelFile {
  readonly format: 'hamstring-dga/2';
  readonly features: readonly string[];
  readonly lexicon: StoredLexicon;
  readonly classifier: GbtModel;
  /** One-vs-rest heads over DGA names only: "which kind of DGA is this name, if it is one". */
  readonly kinds: readonly { readonly kind: string; readonly model: GbtModel }[];
  /** How it was trained (seed, data, metrics): provenance only, never read when scoring. */
  readonly training?: Record<string, unknown>;
}

/** A loaded model: the file's parts, ready to score. */
export interface DgaModel {
  readonly file: DgaModelFile;
  readonly lexicon: Lexicon;
  /** The classifier and the kind heads laid out for scoring (same order as the file's). */
  readonly classifier: FlatGbt;
  readonly kinds: readonly FlatGbt[];
}

/** The scoring form of a model file's parts. */
export function loadedModel(file: DgaModelFile, lexicon: Lexicon = lexiconOf(file.lexicon)): DgaModel {
  return {
    file,
    lexicon,
    classifier: flattenGbt(file.classifier),
    kinds: file.kinds.map((k) => flattenGbt(k.model)),
  };
}

const fileSchema = z.strictObject({
  format: z.literal('hamstring-dga/2'),
  features: z.array(z.string()),
  lexicon: storedLexiconSchema,
  classifier: z.unknown(),
  kinds: z.array(z.strictObject({ kind: z.string().min(1), model: z.unknown() })),
  training: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Validates a parsed model file and checks that it was trained on the features this code
 * computes, in this order.
 */
export function parseDgaModel(json: unknown, path = 'model'): DgaModel {
  const raw = fileSchema.parse(json);
  const same =
    raw.features.length === FEATURE_NAMES.length && raw.features.every((f, i) => f === FEATURE_NAMES[i]);
  if (!same) throw new Error(`model file ${path} was trained on other features than this detector computes`);
  const file: DgaModelFile = {
    ...raw,
    classifier: parseGbtModel(raw.classifier),
    kinds: raw.kinds.map((k) => ({ kind: k.kind, model: parseGbtModel(k.model) })),
  };
  return loadedModel(file);
}

/** Malicious probability of each name; 0 for a name no DGA can use ({@link isInternetName}). */
export function scoreNames(model: DgaModel, names: readonly string[]): number[] {
  return names.map((name) =>
    isInternetName(name) ? sigmoid(flatMargin(model.classifier, domainFeatures(name, model.lexicon))) : 0,
  );
}

/**
 * The kind heads' probabilities of a set of names (an alert's warnings), normalised to shares: a
 * host's names vote together, which is steadier than any single name.
 */
export function attributeKind(
  model: DgaModel,
  names: readonly string[],
): { kind: string; confidence: number } | undefined {
  if (model.file.kinds.length === 0 || names.length === 0) return undefined;
  const totals = new Float64Array(model.file.kinds.length);
  for (const name of names) {
    const x = domainFeatures(name, model.lexicon);
    const p = model.kinds.map((k) => sigmoid(flatMargin(k, x)));
    const sum = p.reduce((a, b) => a + b, 0) || 1;
    p.forEach((v, i) => (totals[i] = (totals[i] ?? 0) + v / sum));
  }
  let best = 0;
  for (let i = 1; i < totals.length; i += 1) if ((totals[i] ?? 0) > (totals[best] ?? 0)) best = i;
  return { kind: model.file.kinds[best]?.kind ?? 'unknown', confidence: (totals[best] ?? 0) / names.length };
}
