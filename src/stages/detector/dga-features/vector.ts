import { LABEL_STATS, LABEL_STAT_NAMES, labelStats, ngramScore } from './label-stats.ts';
import type { Lexicon } from './lexicon.ts';
import { splitName } from './name-split.ts';

/**
 * Names of the DGA features, in the order of {@link domainFeatures}: the name's shape, the
 * registrable label's statistics, and those of the least word-like subdomain label.
 */
export const FEATURE_NAMES: readonly string[] = [
  'label_count',
  'name_length',
  'subdomain_depth',
  'suffix_private',
  'suffix_kind',
  'suffix_labels',
  ...LABEL_STAT_NAMES.map((s) => `registrable_${s}`),
  ...LABEL_STAT_NAMES.map((s) => `subdomain_${s}`),
];

const SHAPE = 6;

function dotsIn(text: string): number {
  let dots = 0;
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 46) dots += 1;
  return dots;
}

/**
 * The DGA features of one name. The randomness a DGA puts into a name can sit in the registrable
 * label (`x7fk2q.com`), in a customer label under a dynamic-DNS parent (`x7fk2q.ddns.net`, which
 * the private suffix list makes registrable), or behind a host label (`www.x7fk2q.com`): the
 * registrable label is always measured, and so is the subdomain label that looks least like
 * benign text, so a host label neither hides a DGA name nor makes a benign one look random.
 */
export function domainFeatures(domain: string, lexicon: Lexicon): Float64Array {
  const split = splitName(domain);
  const out = new Float64Array(FEATURE_NAMES.length);
  out[0] = split.name === '' ? 0 : dotsIn(split.name) + 1;
  out[1] = split.name.length;
  out[2] = split.subdomains.length;
  out[3] = split.suffixKind === 0 ? 0 : 1;
  out[4] = split.suffixKind;
  out[5] = split.suffix === '' ? 0 : dotsIn(split.suffix) + 1;
  labelStats(split.registrable, lexicon, out, SHAPE);
  let least = '';
  let leastScore = Infinity;
  for (const label of split.subdomains) {
    const [mean] = ngramScore(label, lexicon);
    if (mean < leastScore) {
      leastScore = mean;
      least = label;
    }
  }
  labelStats(least, lexicon, out, SHAPE + LABEL_STATS);
  return out;
}
