/**
 * Writes the DGA evaluation's names with their leave-out fold and their features as CSV, for the
 * model-family experiment in this folder (`bash bench/dga-net/run.sh`): the same samples, folds
 * (whole families and whole benign sources) and features as `npm run eval:dga`.
 *
 *   node --import tsx bench/dga-net/export.ts <out.csv>
 */
import { writeFileSync } from 'node:fs';
import { DEFAULT_DATASET, benignSamples, maliciousSamples } from '../../scripts/dga/dataset.ts';
import { foldsOf } from '../../scripts/dga/metrics.ts';
import { trainingLexicon } from '../../scripts/dga/train-model.ts';
import { FEATURE_NAMES, domainFeatures } from '../../src/stages/detector/dga-features/vector.ts';
import { BENIGN_SOURCES } from '../../src/traffic/benign/index.ts';

const out = process.argv[2] ?? 'var/dga-net/samples.csv';
const { seed, perSource, perFamily } = DEFAULT_DATASET;
const samples = [...benignSamples(seed, perSource), ...maliciousSamples(seed, perFamily)];
const families = [...new Set(samples.filter((s) => s.malicious === 1).map((s) => `${s.kind}/${s.family}`))];
const sources = [...new Set(samples.filter((s) => s.malicious === 0).map((s) => s.source))];
// As scripts/dga/cross-validate.ts deals them, so a fold here is the fold there.
const familyFold = new Map([...foldsOf(families, 5, (f) => f)].map(([f, k]) => [f.split('/')[1] ?? f, k]));
const sourceFold = foldsOf(sources, 5, (s) => s);
const origin = new Map(BENIGN_SOURCES.map((s) => [s.name, s.origin]));
const { lexicon } = trainingLexicon();
const rows = [`domain,malicious,family,kind,source,origin,fold,${FEATURE_NAMES.join(',')}`];
for (const s of samples) {
  const fold = (s.malicious === 1 ? familyFold.get(s.family) : sourceFold.get(s.source)) ?? 0;
  const features = Array.from(domainFeatures(s.domain, lexicon), (v) => +v.toFixed(6));
  rows.push(
    [
      s.domain,
      s.malicious,
      s.family,
      s.kind,
      s.source,
      origin.get(s.source) ?? 'dga',
      fold,
      ...features,
    ].join(','),
  );
}
writeFileSync(out, `${rows.join('\n')}\n`);
console.error(
  `${samples.length} names, ${families.length} families, ${sources.length} benign sources -> ${out}`,
);
