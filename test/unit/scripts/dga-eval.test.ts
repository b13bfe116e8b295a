import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crossValidate } from '../../../scripts/dga/cross-validate.ts';
import { benignSamples, familySamples } from '../../../scripts/dga/dataset.ts';
import { precisionAtBase, rateAt, roc, thresholdForFpr } from '../../../scripts/dga/metrics.ts';
import { renderReport } from '../../../scripts/dga/report.ts';
import { summarise } from '../../../scripts/dga/summary.ts';
import { DGA_FAMILIES } from '../../../src/traffic/dga-families.ts';

test('the threshold for an FPR budget lets at most that share of benign scores through', () => {
  const benign = Array.from({ length: 1000 }, (_, i) => i / 1000);
  const t = thresholdForFpr(benign, 0.003);
  assert.ok(rateAt(benign, t) <= 0.003);
  assert.ok(rateAt(benign, t - 0.002) > 0.003, 'and no higher than it must be');
  assert.equal(precisionAtBase(1, 0, 0.01), 1);
  assert.ok(Math.abs(precisionAtBase(0.9, 0.01, 0.01) - 0.009 / (0.009 + 0.0099)) < 1e-12);
  const { auc } = roc([0.1, 0.2], [0.8, 0.9]);
  assert.equal(auc, 1);
});

test('cross-validation scores every family and source with a model that never saw it', () => {
  const families = DGA_FAMILIES.slice(0, 6);
  const samples = [...benignSamples(3, 60), ...families.flatMap((f) => familySamples(f, 3, 60))];
  const cv = crossValidate(samples, {
    folds: 3,
    options: { rounds: 8, learningRate: 0.3, maxDepth: 3, maxBins: 16, lambda: 1, minChildWeight: 1 },
  });
  assert.equal(cv.heldOut.length, samples.length, 'every sample is held out exactly once');
  for (const h of cv.heldOut) {
    const fold =
      h.sample.malicious === 1 ? cv.familyFold.get(h.sample.family) : cv.sourceFold.get(h.sample.source);
    assert.equal(h.fold, fold);
    const train = cv.trainSets[h.fold]!;
    assert.ok(
      !train.some((s) =>
        h.sample.malicious === 1 ? s.family === h.sample.family : s.source === h.sample.source,
      ),
      `${h.sample.family}/${h.sample.source} was in its own fold's training`,
    );
  }
  const summary = summarise(cv, { fprBudget: 0.01, structureOf: () => 'tld', originOf: () => 'real' });
  assert.equal(summary.families.length, families.length);
  const report = renderReport({
    command: 'test',
    dataset: { benign: 1, malicious: 1, families: 6, sources: 13, folds: 3 },
    ours: summary,
    sourceDescriptions: new Map(),
  });
  assert.match(report, /mean recall over families never seen/);
  for (const f of families) assert.match(report, new RegExp(`\\| ${f.name} \\|`));
});
