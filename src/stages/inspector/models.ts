import {
  ENSEMBLE_ARGS,
  MULTIVARIATE_MODEL_ARGS,
  UNIVARIATE_MODEL_ARGS,
  type InspectorConfig,
} from '../../config/index.ts';
import { lodaModel } from './loda.ts';
import { ewmaModel, madModel, zScoreModel, type StreamModel } from './univariate-models.ts';

type ModelEntry = InspectorConfig['models'][number];

/** Rows of the inspector's series: [count] (univariate, ensemble) or [count, mean size] (multivariate). */
export function featureCount(mode: InspectorConfig['mode']): number {
  return mode === 'multivariate' ? 2 : 1;
}

/**
 * The model an inspector entry configures: its one model, or in `ensemble` mode its models combined
 * by the ensemble. The state of a combination is the list of its models' states.
 */
export function inspectorModel(inspector: InspectorConfig): StreamModel<unknown[]> {
  const dims = featureCount(inspector.mode);
  const models = inspector.models.map((entry) => buildModel(entry, inspector.mode, dims));
  const combine =
    inspector.mode === 'ensemble' && inspector.ensemble
      ? ensemble(inspector.ensemble, models.length)
      : (scores: number[]) => scores[0] ?? 0;
  return {
    dims,
    initial: () => models.map((model) => model.initial()),
    scoreAndLearn: (states, row) =>
      combine(models.map((model, index) => model.scoreAndLearn(states[index], row))),
  };
}

function buildModel(entry: ModelEntry, mode: InspectorConfig['mode'], dims: number): StreamModel {
  if (mode === 'multivariate' && entry.model === 'LodaDetector') {
    return lodaModel(MULTIVARIATE_MODEL_ARGS.LodaDetector.parse(entry.model_args), dims);
  }
  switch (entry.model) {
    case 'ZScoreDetector':
      return zScoreModel(UNIVARIATE_MODEL_ARGS.ZScoreDetector.parse(entry.model_args));
    case 'MadDetector':
      return madModel(UNIVARIATE_MODEL_ARGS.MadDetector.parse(entry.model_args));
    case 'EWMADetector':
      return ewmaModel(UNIVARIATE_MODEL_ARGS.EWMADetector.parse(entry.model_args));
    default:
      // The config schema admits only the models above for each mode.
      throw new Error(`inspector model ${entry.model} is not available in mode ${mode}`);
  }
}

/** WeightEnsemble: the weighted mean of the scores; VoteEnsemble: the share of scores >= threshold. */
export function ensemble(entry: ModelEntry, models: number): (scores: number[]) => number {
  if (entry.model === 'VoteEnsemble') {
    const { threshold } = ENSEMBLE_ARGS.VoteEnsemble.parse(entry.model_args);
    return (scores) => scores.filter((score) => score >= threshold).length / scores.length;
  }
  const { ensemble_weights } = ENSEMBLE_ARGS.WeightEnsemble.parse(entry.model_args);
  const weights = ensemble_weights ?? new Array<number>(models).fill(1);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return (scores) =>
    total === 0 ? 0 : scores.reduce((sum, score, i) => sum + score * (weights[i] ?? 0), 0) / total;
}
