/**
 * `npm run train:dga [-- --seed N --out models/dga-gbt.json]`: trains the DGA model on every benign
 * source and every DGA family (with host labels in front of a share of DGA names), with one kind
 * head per kind of DGA for attribution, and writes the model file and its SHA-256 (the `checksum`
 * the detector's config must carry). Figures on unseen families and sources: `npm run eval:dga`.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
import { serializeModel, sha256Hex } from '../src/stages/detector/model/model-file.ts';
import { DEFAULT_DATASET, benignSamples, maliciousSamples } from './dga/dataset.ts';
import { DGA_GBT_OPTIONS, trainDgaModel } from './dga/train-model.ts';
import { rateAt } from './dga/metrics.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(DEFAULT_DATASET.seed) },
    out: { type: 'string', default: 'models/dga-gbt.json' },
  },
});
const seed = Number(values.seed);
const t0 = performance.now();
const samples = [
  ...benignSamples(seed, DEFAULT_DATASET.perSource),
  ...maliciousSamples(seed, DEFAULT_DATASET.perFamily),
];
const model = trainDgaModel(samples, {
  kinds: true,
  training: {
    command: 'npm run train:dga',
    seed,
    per_family: DEFAULT_DATASET.perFamily,
    per_source: DEFAULT_DATASET.perSource,
    options: DGA_GBT_OPTIONS,
    figures: 'npm run eval:dga (docs/dga-evaluation.md)',
  },
});
const text = serializeModel(model.file);
writeFileSync(values.out, text);
const sha256 = sha256Hex(text);
writeFileSync(`${values.out}.sha256`, `${sha256}  ${values.out.split('/').pop()}\n`);

// Names of seeds the training never drew: a check that the file scores what it learnt.
const fresh = maliciousSamples(seed + 1, 50);
const freshScores = scoreNames(
  model,
  fresh.map((s) => s.domain),
);
console.log(
  `trained on ${samples.length} names in ${((performance.now() - t0) / 1000).toFixed(1)} s: ` +
    `${model.file.classifier.trees.length} trees, ${model.file.kinds.length} kind heads`,
);
console.log(
  `families it was trained on, new malware seeds: ${(100 * rateAt(freshScores, 0.5)).toFixed(2)} % at 0.5`,
);
console.log(`model ${values.out}: sha256 ${sha256}`);
