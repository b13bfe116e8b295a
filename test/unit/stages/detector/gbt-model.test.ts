import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { FEATURE_NAMES } from '../../../../src/stages/detector/dga-features/vector.ts';
import { gbtProbability, parseGbtModel, type GbtModel } from '../../../../src/stages/detector/model/gbt.ts';
import { trainGbt } from '../../../../src/stages/detector/model/gbt-train.ts';
import { flatMargin, flattenGbt } from '../../../../src/stages/detector/model/gbt-flat.ts';
import { attributeKind } from '../../../../src/stages/detector/model/dga-model.ts';
import {
  modelFromBytes,
  serializeModel,
  sha256Hex,
} from '../../../../src/stages/detector/model/model-file.ts';
import { dgaModelFile } from '../../../support/dga-model.ts';

const stump: GbtModel = {
  format: 'hamstring-gbt/1',
  features: ['x', 'y'],
  base_score: 0.5,
  learning_rate: 0.5,
  trees: [
    [
      [0, 1, 1, 2],
      [-1, -1],
      [-1, 3],
    ],
    [
      [1, 0, 1, 2],
      [-1, 2],
      [-1, 0],
    ],
  ],
};

test('a tree ensemble scores sigmoid(base + rate * sum of leaves), values <= threshold going left', () => {
  // x=1 -> left (-1); y=0 -> left (2): 0.5 + 0.5 * 1 = 1
  assert.equal(gbtProbability(stump, [1, 0]), 1 / (1 + Math.exp(-1)));
  // x=2 -> right (3); y=5 -> right (0): 0.5 + 0.5 * 3 = 2
  assert.equal(gbtProbability(stump, [2, 5]), 1 / (1 + Math.exp(-2)));
});

test('a model whose split points back up its tree is refused (scoring could loop)', () => {
  const looping = {
    ...stump,
    trees: [
      [
        [0, 1, 1, 2],
        [0, 1, 1, 2],
        [-1, 1],
      ],
    ],
  };
  assert.throws(() => parseGbtModel(looping), /tree 0 node 1: child 1 out of range/);
});

test('a model trained on other features than the detector computes is refused', () => {
  const text = serializeModel({ ...dgaModelFile([[[-1, 0]]]), features: ['x', 'y'] });
  assert.throws(() => modelFromBytes('m.json', Buffer.from(text), sha256Hex(text)), /other features/);
});

test('training is deterministic and learns a separable rule', () => {
  const rows: Float64Array[] = [];
  const labels: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    rows.push(Float64Array.from([i % 20, (i * 7) % 13]));
    labels.push(i % 20 >= 12 ? 1 : 0);
  }
  const options = { rounds: 20, learningRate: 0.3, maxDepth: 2, maxBins: 16, lambda: 1, minChildWeight: 1 };
  const a = trainGbt(rows, labels, ['x', 'y'], options);
  const b = trainGbt(rows, labels, ['x', 'y'], options);
  assert.equal(JSON.stringify(a), JSON.stringify(b));
  assert.ok(gbtProbability(a, [15, 3]) > 0.9);
  assert.ok(gbtProbability(a, [5, 3]) < 0.1);
  assert.equal(a.trees[0]?.[0]?.[0], 0, 'the first split is on the informative feature');
});

test('the flat layout scores exactly as the stored trees do', () => {
  const flat = flattenGbt(stump);
  for (const x of [
    [1, 0],
    [2, 5],
    [0.5, -1],
    [9, 0],
  ])
    assert.equal(
      1 / (1 + Math.exp(-flatMargin(flat, Float64Array.from(x)))),
      gbtProbability(stump, x),
      `at ${x.join(',')}`,
    );
});

test('a monotone constraint holds even where the training data say otherwise', () => {
  // Label rises with x except on a band in the middle: unconstrained trees learn the dip.
  const rows: Float64Array[] = [];
  const labels: number[] = [];
  for (let i = 0; i < 400; i += 1) {
    const x = i % 40;
    rows.push(Float64Array.from([x, (i * 7) % 13]));
    labels.push(x >= 20 && !(x >= 28 && x < 32) ? 1 : 0);
  }
  const options = { rounds: 30, learningRate: 0.3, maxDepth: 3, maxBins: 40, lambda: 1, minChildWeight: 1 };
  const scores = (m: GbtModel): number[] => Array.from({ length: 40 }, (_, x) => gbtProbability(m, [x, 3]));
  const rising = (xs: number[]): boolean => xs.every((p, i) => i === 0 || p >= (xs[i - 1] ?? 0) - 1e-12);
  assert.equal(rising(scores(trainGbt(rows, labels, ['x', 'y'], options))), false, 'the dip is learnt');
  const constrained = trainGbt(rows, labels, ['x', 'y'], { ...options, monotone: [1, 0] });
  assert.ok(rising(scores(constrained)), 'never falls as x grows');
  assert.ok(gbtProbability(constrained, [35, 3]) > 0.9);
  assert.ok(gbtProbability(constrained, [5, 3]) < 0.1);
});

test('sample weights shift the decision towards the heavier rows', () => {
  // The same feature value carries both labels; the weights decide which one wins.
  const rows = Array.from({ length: 100 }, () => Float64Array.from([1]));
  const labels = Array.from({ length: 100 }, (_, i) => (i < 50 ? 1 : 0));
  const options = { rounds: 10, learningRate: 0.5, maxDepth: 1, maxBins: 4, lambda: 1, minChildWeight: 1 };
  const heavyMalicious = labels.map((l) => (l === 1 ? 3 : 1));
  assert.ok(gbtProbability(trainGbt(rows, labels, ['x'], options, heavyMalicious), [1]) > 0.7);
  const heavyBenign = labels.map((l) => (l === 1 ? 1 : 3));
  assert.ok(gbtProbability(trainGbt(rows, labels, ['x'], options, heavyBenign), [1]) < 0.3);
});

test('the committed model matches its checksum file and the shipped config, and loads', () => {
  const bytes = readFileSync('models/dga-gbt.json');
  const recorded = readFileSync('models/dga-gbt.json.sha256', 'utf8').split(/\s+/)[0];
  assert.equal(sha256Hex(bytes), recorded);
  const config = parseYaml(readFileSync('config.yaml', 'utf8')) as {
    pipeline: { data_analysis: { detector_class_name: string; checksum: string }[] };
  };
  const dga = config.pipeline.data_analysis.find((d) => d.detector_class_name === 'DGADetector');
  assert.equal(dga?.checksum, recorded);
  const model = modelFromBytes('models/dga-gbt.json', bytes, recorded ?? '');
  assert.deepEqual(model.file.features, FEATURE_NAMES);
  assert.ok(model.file.kinds.length >= 5, 'the shipped model attributes kinds of DGA');
});

test("the shipped model attributes a host's DGA names to their kind", () => {
  const bytes = readFileSync('models/dga-gbt.json');
  const model = modelFromBytes('models/dga-gbt.json', bytes, sha256Hex(bytes));
  const hex = [
    'f1eb0b9b3abc8b55035b2458010b4dae.info',
    '02237cc6767d7e535b1b918ebf2ca8f6.info',
    'd3b07384d113edec49eaa6238ad5ff00.org',
  ];
  assert.equal(attributeKind(model, hex)?.kind, 'hex');
  const words = ['barefootknap.net', 'homologycrinums.net', 'pikakeemptysis.net', 'tergalpreed.net'];
  assert.equal(attributeKind(model, words)?.kind, 'wordlist');
  assert.equal(attributeKind(model, []), undefined);
});
