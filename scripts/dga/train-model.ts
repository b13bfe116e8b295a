/** Trains a DGA model file (classifier, kind heads, lexicon) from labelled samples. */
import {
  lexiconOf,
  storeLexicon,
  trigramModel,
  type Lexicon,
  type StoredLexicon,
} from '../../src/stages/detector/dga-features/lexicon.ts';
import { FEATURE_NAMES, domainFeatures } from '../../src/stages/detector/dga-features/vector.ts';
import { loadedModel, type DgaModel, type DgaModelFile } from '../../src/stages/detector/model/dga-model.ts';
import { trainGbt, type GbtTrainOptions } from '../../src/stages/detector/model/gbt-train.ts';
import { benignText } from '../../src/traffic/benign-text.ts';
import type { Sample } from './dataset.ts';

export const DGA_GBT_OPTIONS: GbtTrainOptions = {
  rounds: 200,
  learningRate: 0.15,
  maxDepth: 6,
  maxBins: 64,
  lambda: 1,
  minChildWeight: 2,
};

/** Kind heads need less: they only rank kinds among names already judged DGA. */
const KIND_OPTIONS: GbtTrainOptions = { ...DGA_GBT_OPTIONS, rounds: 60, maxDepth: 4 };

/** Most common words kept for segmentation: the rest of the lists add size, not coverage. */
const LEXICON_WORDS = 150_000;

let lexiconCache: { stored: StoredLexicon; lexicon: Lexicon } | undefined;

/** The lexicon, stored and loaded (built once per process: it depends on the word lists only). */
export function trainingLexicon(): { stored: StoredLexicon; lexicon: Lexicon } {
  if (!lexiconCache) {
    const text = benignText();
    const stored = storeLexicon(trigramModel(text.texts), text.wordsByFrequency.slice(0, LEXICON_WORDS));
    lexiconCache = { stored, lexicon: lexiconOf(stored) };
  }
  return lexiconCache;
}

export function featuresOf(model: Pick<DgaModel, 'lexicon'>, samples: readonly Sample[]): Float64Array[] {
  return samples.map((s) => domainFeatures(s.domain, model.lexicon));
}

/**
 * Trains the classifier on every sample and, with `kinds`, one head per DGA kind on the
 * malicious samples. Deterministic: the same samples and options give the same bytes.
 */
export function trainDgaModel(
  samples: readonly Sample[],
  o: { kinds: boolean; options?: GbtTrainOptions; training?: Record<string, unknown> },
): DgaModel {
  const { stored, lexicon } = trainingLexicon();
  const x = featuresOf({ lexicon }, samples);
  const options = o.options ?? DGA_GBT_OPTIONS;
  const classifier = trainGbt(
    x,
    samples.map((s) => s.malicious),
    FEATURE_NAMES,
    options,
  );
  const kinds: DgaModelFile['kinds'][number][] = [];
  if (o.kinds) {
    const dga = samples.map((s, i) => ({ s, x: x[i] as Float64Array })).filter((r) => r.s.malicious === 1);
    for (const kind of [...new Set(dga.map((r) => r.s.kind))].sort()) {
      const model = trainGbt(
        dga.map((r) => r.x),
        dga.map((r) => (r.s.kind === kind ? 1 : 0)),
        FEATURE_NAMES,
        KIND_OPTIONS,
      );
      kinds.push({ kind, model });
    }
  }
  const file: DgaModelFile = {
    format: 'hamstring-dga/2',
    features: [...FEATURE_NAMES],
    lexicon: stored,
    classifier,
    kinds,
    ...(o.training ? { training: o.training } : {}),
  };
  return loadedModel(file, lexicon);
}
