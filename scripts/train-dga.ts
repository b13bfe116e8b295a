/**
 * `npm run train:dga [-- --seed N --out models/dga-gbt.json]`: builds the labelled name set, trains
 * the DGA classifier, prints precision, recall and false-positive rate on held-out names, and writes
 * the model file and its SHA-256 (the `checksum` the detector's config must carry).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FEATURE_NAMES, domainFeatures } from '../src/stages/detector/features.ts';
import { gbtProbability, type GbtModel } from '../src/stages/detector/model/gbt.ts';
import { DEFAULT_GBT_OPTIONS, trainGbt } from '../src/stages/detector/model/gbt-train.ts';
import { serializeModel } from '../src/stages/detector/model/model-file.ts';
import { dgaTrainingSet, type LabelledDomain } from '../src/traffic/training-set.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '20261130' },
    out: { type: 'string', default: 'models/dga-gbt.json' },
    threshold: { type: 'string', default: '0.5' },
  },
});
const seed = Number(values.seed);
const threshold = Number(values.threshold);
const options = { seed, perFamily: 3000, benign: 30000 };

const t0 = performance.now();
const { train, test } = dgaTrainingSet(options);
const features = (set: LabelledDomain[]) => set.map((s) => domainFeatures(s.domain));
const model: GbtModel = {
  ...trainGbt(
    features(train),
    train.map((s) => s.malicious),
    FEATURE_NAMES,
    DEFAULT_GBT_OPTIONS,
  ),
};
const trainSeconds = (performance.now() - t0) / 1000;

interface Counts {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}
const total: Counts = { tp: 0, fp: 0, tn: 0, fn: 0 };
const perFamily = new Map<string, { n: number; flagged: number }>();
const testFeatures = features(test);
test.forEach((s, i) => {
  const flagged = gbtProbability(model, testFeatures[i] ?? []) >= threshold;
  const cell: keyof Counts = s.malicious ? (flagged ? 'tp' : 'fn') : flagged ? 'fp' : 'tn';
  total[cell] += 1;
  const f = perFamily.get(s.family) ?? { n: 0, flagged: 0 };
  f.n += 1;
  if (flagged) f.flagged += 1;
  perFamily.set(s.family, f);
});
const precision = total.tp / (total.tp + total.fp);
const recall = total.tp / (total.tp + total.fn);
const fpr = total.fp / (total.fp + total.tn);

const withProvenance: GbtModel = {
  ...model,
  training: {
    command: 'npm run train:dga',
    seed,
    per_family: options.perFamily,
    benign: options.benign,
    options: DEFAULT_GBT_OPTIONS,
    held_out: { threshold, samples: test.length, precision, recall, false_positive_rate: fpr },
  },
};
const text = serializeModel(withProvenance);
writeFileSync(values.out, text);
const sha256 = createHash('sha256').update(text).digest('hex');
writeFileSync(`${values.out}.sha256`, `${sha256}  ${values.out.split('/').pop()}\n`);

const pct = (x: number) => `${(100 * x).toFixed(2)} %`;
console.log(`trained on ${train.length} names (${trainSeconds.toFixed(1)} s), held out ${test.length}`);
console.log(
  `held-out at threshold ${threshold}: precision ${pct(precision)}, recall ${pct(recall)}, false-positive rate ${pct(fpr)}`,
);
console.log(`  tp ${total.tp}  fp ${total.fp}  tn ${total.tn}  fn ${total.fn}`);
for (const [family, f] of [...perFamily].sort()) {
  const label = family === 'benign' ? 'flagged (false positives)' : 'recall';
  console.log(`  ${family.padEnd(13)} ${label} ${pct(f.flagged / f.n)} of ${f.n}`);
}
console.log(`model ${values.out}: ${model.trees.length} trees, sha256 ${sha256}`);
