import { LABEL_STATS, LABEL_STAT_NAMES, labelStats, ngramScore } from './label-stats.ts';
import type { Lexicon } from './lexicon.ts';
import { splitName, type NameSplit } from './name-split.ts';

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

/**
 * Conventional host labels: the service names (RFC 2219's aliases and their common kin) and their
 * numbered forms that anybody, benign or not, puts in front of a registered name. They say nothing
 * about whether that name was generated, so the features do not see them: `www.x7fk2q.com` is
 * measured as `x7fk2q.com`. Without this, "has a subdomain" was a sign of benign the model could
 * learn from the benign lists (most names there carry one) and DGA names behind `www.` were missed.
 */
const HOST_LABEL =
  /^(?:www|ns|mx|mail|smtp|imap|pop3?|ftp|m|api|cdn|vpn|webmail|static|img|blog|shop)\d{0,2}$/;

/** The split without the conventional host labels at its left (never the registrable label). */
function withoutHostLabels(split: NameSplit): NameSplit {
  let skip = 0;
  let cut = 0;
  while (skip < split.subdomains.length && HOST_LABEL.test(split.subdomains[skip] ?? '')) {
    cut += (split.subdomains[skip]?.length ?? 0) + 1;
    skip += 1;
  }
  if (skip === 0) return split;
  return { ...split, name: split.name.slice(cut), subdomains: split.subdomains.slice(skip) };
}

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
  const split = withoutHostLabels(splitName(domain));
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
