/**
 * Leave-family-out and leave-source-out cross-validation: families and benign sources are dealt
 * into folds, and each fold's model is trained without its families and sources, so every held-out
 * score comes from a model that never saw that family or that source.
 */
import type { DgaModel } from '../../src/stages/detector/model/dga-model.ts';
import { scoreNames } from '../../src/stages/detector/model/dga-model.ts';
import type { GbtTrainOptions } from '../../src/stages/detector/model/gbt-train.ts';
import type { Sample } from './dataset.ts';
import { foldsOf } from './metrics.ts';
import { trainDgaModel } from './train-model.ts';

export interface HeldOut {
  readonly sample: Sample;
  readonly fold: number;
  readonly score: number;
  /** The score of the same DGA name behind a `www.` host label (malicious samples only). */
  readonly wwwScore?: number;
}

export interface CrossValidation {
  readonly folds: number;
  readonly heldOut: HeldOut[];
  readonly models: DgaModel[];
  readonly familyFold: Map<string, number>;
  readonly sourceFold: Map<string, number>;
  /** Training samples of each fold (for the random-forest anchor). */
  readonly trainSets: Sample[][];
}

export function crossValidate(
  samples: readonly Sample[],
  o: {
    folds: number;
    options?: GbtTrainOptions;
    log?: (line: string) => void;
  },
): CrossValidation {
  const families = [...new Set(samples.filter((s) => s.malicious === 1).map((s) => `${s.kind}/${s.family}`))];
  const sources = [...new Set(samples.filter((s) => s.malicious === 0).map((s) => s.source))];
  const familyFold = new Map(
    [...foldsOf(families, o.folds, (f) => f)].map(([f, k]) => [f.split('/')[1] ?? f, k]),
  );
  const sourceFold = foldsOf(sources, o.folds, (s) => s);
  const foldOf = (s: Sample): number =>
    (s.malicious === 1 ? familyFold.get(s.family) : sourceFold.get(s.source)) ?? 0;
  const heldOut: HeldOut[] = [];
  const models: DgaModel[] = [];
  const trainSets: Sample[][] = [];
  for (let k = 0; k < o.folds; k += 1) {
    const t0 = performance.now();
    const train = samples.filter((s) => foldOf(s) !== k);
    const test = samples.filter((s) => foldOf(s) === k);
    const model = trainDgaModel(train, { kinds: false, ...(o.options ? { options: o.options } : {}) });
    const scores = scoreNames(
      model,
      test.map((s) => s.domain),
    );
    const dga = test.filter((s) => s.malicious === 1);
    const www = new Map(
      scoreNames(
        model,
        dga.map((s) => `www.${s.domain}`),
      ).map((score, i) => [dga[i] as Sample, score]),
    );
    test.forEach((sample, i) => {
      const wwwScore = www.get(sample);
      heldOut.push({
        sample,
        fold: k,
        score: scores[i] ?? 0,
        ...(wwwScore === undefined ? {} : { wwwScore }),
      });
    });
    models.push(model);
    trainSets.push(train);
    o.log?.(
      `fold ${k + 1}/${o.folds}: trained on ${train.length} names, held out ${test.length} ` +
        `(${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
  }
  return { folds: o.folds, heldOut, models, familyFold, sourceFold, trainSets };
}
