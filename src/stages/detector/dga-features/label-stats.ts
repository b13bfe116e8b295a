import { EDGE, SYMBOLS, symbolOf, type Lexicon } from './lexicon.ts';

/** Names of {@link labelStats}' values, in order. */
export const LABEL_STAT_NAMES = [
  'length',
  'digit_ratio',
  'symbol_count',
  'vowel_ratio',
  'max_consonant_run',
  'max_digit_run',
  'class_switches',
  'unique_ratio',
  'entropy',
  'ngram_mean',
  'ngram_min',
  'ngram_rare_share',
  'word_coverage',
  'word_count',
  'word_rarity',
  'is_hex',
] as const;

export const LABEL_STATS = LABEL_STAT_NAMES.length;

/** 1 at the character codes of a, e, i, o, u, y (a table: read per character of every label). */
const VOWELS = new Uint8Array(128);
for (const v of 'aeiouy') VOWELS[v.charCodeAt(0)] = 1;
/** A trigram rarer than this in benign text is "rare" (log of 1 %). */
const RARE = Math.log(0.01);
/** Work arrays of {@link wordCover} (labels are at most 63 characters). */
const covered = new Int32Array(256);
const words = new Int32Array(256);
const rarity = new Float64Array(256);

/** Mean and minimum trigram log-probability of a label, and the share of rare trigrams. */
export function ngramScore(label: string, lexicon: Lexicon): [mean: number, min: number, rare: number] {
  const t = lexicon.trigram;
  let a = EDGE;
  let b = EDGE;
  let sum = 0;
  let min = 0;
  let rare = 0;
  for (let i = 0; i <= label.length; i += 1) {
    const c = i === label.length ? EDGE : symbolOf(label.charCodeAt(i));
    const lp = t[(a * SYMBOLS + b) * SYMBOLS + c] ?? RARE;
    sum += lp;
    if (lp < min) min = lp;
    if (lp < RARE) rare += 1;
    a = b;
    b = c;
  }
  const n = label.length + 1;
  return [sum / n, min, rare / n];
}

/**
 * The best cover of a label by words of 3+ letters (the most letters covered, then the fewest
 * words): covered share, word count, mean rarity of the words used. Dictionary DGAs are covered by
 * a few words, as benign names are; what differs is often how rare those words are.
 */
export function wordCover(
  label: string,
  lexicon: Lexicon,
): [coverage: number, words: number, rarity: number] {
  const n = label.length;
  if (n === 0) return [0, 0, 0];
  const trie = lexicon.words;
  covered.fill(0, 0, n + 1);
  words.fill(0, 0, n + 1);
  rarity.fill(0, 0, n + 1);
  for (let i = 0; i < n; i += 1) {
    const ci = covered[i] ?? 0;
    const wi = words[i] ?? 0;
    // Skipping a character keeps the cover of the prefix.
    if (ci > (covered[i + 1] ?? 0) || (ci === covered[i + 1] && wi < (words[i + 1] ?? 0))) {
      covered[i + 1] = ci;
      words[i + 1] = wi;
      rarity[i + 1] = rarity[i] ?? 0;
    }
    let node = 0;
    for (let j = i; j < n; j += 1) {
      node = trie.next(node, label.charCodeAt(j));
      if (node < 0) break;
      const value = trie.rarity(node);
      if (value < 0 || j - i + 1 < 3) continue;
      const c = ci + (j - i + 1);
      const w = wi + 1;
      if (c > (covered[j + 1] ?? 0) || (c === covered[j + 1] && w < (words[j + 1] ?? 0))) {
        covered[j + 1] = c;
        words[j + 1] = w;
        rarity[j + 1] = (rarity[i] ?? 0) + value;
      }
    }
  }
  const w = words[n] ?? 0;
  return [(covered[n] ?? 0) / n, w, w === 0 ? 1 : (rarity[n] ?? 0) / w];
}

/** Character counts of the label being measured (reused: scoring runs per name, on one thread). */
const counts = new Int32Array(128);

/** Shannon entropy in bits per character and the share of distinct characters. */
function spread(label: string): [entropy: number, unique: number] {
  const n = label.length;
  for (let i = 0; i < n; i += 1) {
    const at = label.charCodeAt(i) & 127;
    counts[at] = (counts[at] ?? 0) + 1;
  }
  let h = 0;
  let distinct = 0;
  for (let i = 0; i < n; i += 1) {
    const at = label.charCodeAt(i) & 127;
    const count = counts[at] ?? 0;
    if (count === 0) continue;
    const p = count / n;
    h -= p * Math.log2(p);
    distinct += 1;
    counts[at] = 0;
  }
  return [h, distinct / n];
}

/**
 * What one label looks like, written into `out` from `at` (see {@link LABEL_STAT_NAMES}): its
 * length and alphabet, how letters and digits alternate, how likely its letter sequence is in real
 * benign text, and how well words cover it. An empty label gives zeros.
 */
export function labelStats(label: string, lexicon: Lexicon, out: Float64Array, at: number): void {
  const n = label.length;
  if (n === 0) {
    out.fill(0, at, at + LABEL_STATS);
    return;
  }
  let digits = 0;
  let symbols = 0;
  let letters = 0;
  let vowels = 0;
  let consonantRun = 0;
  let maxConsonantRun = 0;
  let digitRun = 0;
  let maxDigitRun = 0;
  let switches = 0;
  let previous = -1;
  let hex = true;
  for (let i = 0; i < n; i += 1) {
    const code = label.charCodeAt(i);
    const isLetter = code >= 97 && code <= 122;
    const isDigit = code >= 48 && code <= 57;
    const kind = isLetter ? 0 : isDigit ? 1 : 2;
    if (previous >= 0 && kind !== previous && kind !== 2 && previous !== 2) switches += 1;
    previous = kind;
    if (!isDigit && !(code >= 97 && code <= 102)) hex = false;
    if (isLetter) {
      letters += 1;
      digitRun = 0;
      if (VOWELS[code] === 1) {
        vowels += 1;
        consonantRun = 0;
      } else maxConsonantRun = Math.max(maxConsonantRun, ++consonantRun);
    } else {
      consonantRun = 0;
      if (isDigit) {
        digits += 1;
        maxDigitRun = Math.max(maxDigitRun, ++digitRun);
      } else {
        symbols += 1;
        digitRun = 0;
      }
    }
  }
  const [ngramMean, ngramMin, ngramRare] = ngramScore(label, lexicon);
  const [coverage, words, rarity] = wordCover(label, lexicon);
  const [h, unique] = spread(label);
  let i = at;
  out[i++] = n;
  out[i++] = digits / n;
  out[i++] = symbols;
  out[i++] = letters === 0 ? 0 : vowels / letters;
  out[i++] = maxConsonantRun;
  out[i++] = maxDigitRun;
  out[i++] = switches / n;
  out[i++] = unique;
  out[i++] = h;
  out[i++] = ngramMean;
  out[i++] = ngramMin;
  out[i++] = ngramRare;
  out[i++] = coverage;
  out[i++] = words;
  out[i++] = rarity;
  out[i++] = hex && n >= 8 && digits > 0 ? 1 : 0;
}
