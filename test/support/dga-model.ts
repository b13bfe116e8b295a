import { SYMBOLS } from '../../src/stages/detector/dga-features/lexicon.ts';
import { FEATURE_NAMES } from '../../src/stages/detector/dga-features/vector.ts';
import type { DgaModelFile } from '../../src/stages/detector/model/dga-model.ts';
import type { TreeNode } from '../../src/stages/detector/model/gbt.ts';

/**
 * A DGA model file around hand-written trees over the real features, with a flat lexicon (every
 * trigram equally likely, no words): tests decide scores by the trees alone.
 */
export function dgaModelFile(trees: TreeNode[][], kinds: DgaModelFile['kinds'] = []): DgaModelFile {
  return {
    format: 'hamstring-dga/2',
    features: [...FEATURE_NAMES],
    lexicon: { trigram: new Array<number>(SYMBOLS ** 3).fill(Math.log(1 / SYMBOLS)), words: [] },
    classifier: {
      format: 'hamstring-gbt/1',
      features: [...FEATURE_NAMES],
      base_score: 0,
      learning_rate: 1,
      trees,
    },
    kinds,
  };
}
