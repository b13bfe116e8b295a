import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ensemble } from '../../../src/stages/inspector/models.ts';
import { gaussianDirections, lodaModel, rarity } from '../../../src/stages/inspector/loda.ts';
import {
  ewmaModel,
  madModel,
  zScoreModel,
  type StreamModel,
} from '../../../src/stages/inspector/univariate-models.ts';

function scores<S>(model: StreamModel<S>, values: readonly (number | number[])[]): number[] {
  const state = model.initial();
  return values.map((value) => model.scoreAndLearn(state, typeof value === 'number' ? [value] : value));
}

const near = (actual: readonly number[], expected: readonly number[]) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((value, i) =>
    assert.ok(Math.abs(value - expected[i]!) < 1e-6, `score ${i}: ${value} != ${expected[i]}`),
  );
};

test('ZScore over a window: |x - mean| / std / sigma of the previous values, capped at 1', () => {
  // Window [1,4,2] before 5: mean 7/3, std sqrt(14)/3, so (8/3) / (sqrt(14)/3) / 3 = 8 / (3 sqrt(14)).
  near(scores(zScoreModel({ window_len: 3, is_global: false, sigma: 3 }), [1, 1, 4, 2, 5]), [
    0,
    0,
    1,
    0,
    8 / (3 * Math.sqrt(14)),
  ]);
});

test('ZScore global: running mean and std over everything seen', () => {
  // Before 6: mean 3, std 1 -> 3 / 1 / 6 = 0.5; before 4 the history is constant -> 1.
  near(scores(zScoreModel({ window_len: 2, is_global: true, sigma: 6 }), [2, 4, 6]), [0, 1, 0.5]);
});

test('MAD: |x - median| / (1.4826 MAD) / sigma', () => {
  near(scores(madModel({ window_len: 5, sigma: 10 }), [1, 2, 3, 4, 10]), [
    0,
    1, // MAD of [1] is 0 and 2 differs
    1.5 / (1.4826 * 0.5) / 10,
    2 / 1.4826 / 10,
    7.5 / 1.4826 / 10,
  ]);
});

test('EWMA: residual over the exponentially weighted std', () => {
  // alpha 0.5: after 10, 12 the mean is 11 and the variance 0.5 * (0 + 0.5 * 4) = 1; after 11 it is 0.5.
  near(scores(ewmaModel({ alpha: 0.5, sigma: 4 }), [10, 12, 11, 13]), [0, 1, 0, 2 / Math.sqrt(0.5) / 4]);
});

test('Loda rarity: 1 - (rows in the bin / rows in the fullest bin), 1 outside the seen range', () => {
  const values = [0, 0, 0, 1, 2, 3, 10];
  assert.equal(rarity(values, 10, 2), 1 - 1 / 6);
  assert.equal(rarity(values, 1, 2), 0);
  assert.equal(rarity(values, 11, 2), 1);
  assert.equal(rarity(values, -1, 2), 1);
  assert.equal(rarity([2, 2], 2, 2), 0);
});

test('Loda on one feature equals the rarity of the raw values (projection and scaling keep the bins)', () => {
  const model = lodaModel({ window_len: 10, projections: 3, bins: 2, seed: 7 }, 1);
  const result = scores(model, [0, 0, 0, 1, 2, 3, 10, 10]);
  near(result.slice(7), [1 - 1 / 6]);
});

test('Loda on two features scores a far outlier near 1 and a typical row low; the seed fixes the projections', () => {
  const model = lodaModel({ window_len: 64, projections: 10, bins: 5, seed: 42 }, 2);
  const history = Array.from({ length: 40 }, (_, i) => [1 + (i % 3), 100 + (i % 5) * 10]);
  const result = scores(model, [...history, [2, 120], [500, 90_000]]);
  assert.ok(result[40]! < 0.5, `typical row scored ${result[40]}`);
  assert.ok(result[41]! > 0.9, `outlier scored ${result[41]}`);
  assert.deepEqual(gaussianDirections(3, 2, 42), gaussianDirections(3, 2, 42));
  assert.notDeepEqual(gaussianDirections(3, 2, 42), gaussianDirections(3, 2, 43));
});

test('ensembles: weighted mean of the scores, and share of votes at or above the threshold', () => {
  const weighted = ensemble(
    { model: 'WeightEnsemble', module: 'streamad.process', model_args: { ensemble_weights: [3, 1] } },
    2,
  );
  assert.equal(weighted([1, 0]), 0.75);
  const equal = ensemble({ model: 'WeightEnsemble', module: 'streamad.process', model_args: {} }, 2);
  assert.equal(equal([1, 0]), 0.5);
  const vote = ensemble(
    { model: 'VoteEnsemble', module: 'streamad.process', model_args: { threshold: 0.8 } },
    3,
  );
  assert.equal(vote([0.9, 0.5, 0.8]), 2 / 3);
});
