import { z } from 'zod';
import { WordTrie } from './word-trie.ts';

/**
 * What the DGA features measure names against: a character trigram model of real benign text and
 * a word list with each word's rarity. Both are built once by the trainer from word lists that npm
 * packages ship and stored inside the model file, so a model always scores with the very text it
 * was trained with (its checksum covers both) and nothing is read from a package at scoring time.
 */
export interface Lexicon {
  /** log P(c | a b) per trigram, indexed `(a * SYMBOLS + b) * SYMBOLS + c` (see {@link symbolOf}). */
  readonly trigram: Float64Array;
  /** Words with their rarity in [0, 1] (0 the most common word, 1 the rarest). */
  readonly words: WordTrie;
}

/** a-z, one class for digits, one for hyphens and anything else, one for the label's edges. */
export const SYMBOLS = 29;
const DIGIT = 26;
const OTHER = 27;
export const EDGE = 28;

/** The trigram symbol of a character code. */
export function symbolOf(code: number): number {
  if (code >= 97 && code <= 122) return code - 97;
  if (code >= 48 && code <= 57) return DIGIT;
  return OTHER;
}

/** Smoothing of unseen trigrams: small enough that a letter sequence no language writes stands out. */
const ADD_K = 0.05;

/**
 * Trigram log-probabilities of `texts` (each a word; lower-case a-z are expected, anything else
 * takes its class), with add-k smoothing. Each word counts once: labels are names, not prose.
 */
export function trigramModel(texts: Iterable<string>): Float64Array {
  const counts = new Float64Array(SYMBOLS * SYMBOLS * SYMBOLS);
  for (const text of texts) {
    let a = EDGE;
    let b = EDGE;
    for (let i = 0; i <= text.length; i += 1) {
      const c = i === text.length ? EDGE : symbolOf(text.charCodeAt(i));
      const at = (a * SYMBOLS + b) * SYMBOLS + c;
      counts[at] = (counts[at] ?? 0) + 1;
      a = b;
      b = c;
    }
  }
  const out = new Float64Array(counts.length);
  for (let ab = 0; ab < SYMBOLS * SYMBOLS; ab += 1) {
    let total = 0;
    for (let c = 0; c < SYMBOLS; c += 1) total += counts[ab * SYMBOLS + c] ?? 0;
    for (let c = 0; c < SYMBOLS; c += 1)
      out[ab * SYMBOLS + c] = Math.log(((counts[ab * SYMBOLS + c] ?? 0) + ADD_K) / (total + ADD_K * SYMBOLS));
  }
  return out;
}

/** The lexicon as stored in a model file: trigram log-probabilities rounded, words by frequency. */
export interface StoredLexicon {
  readonly trigram: number[];
  readonly words: string[];
}

export const storedLexiconSchema = z.strictObject({
  trigram: z.array(z.number()).length(SYMBOLS * SYMBOLS * SYMBOLS),
  words: z.array(z.string().regex(/^[a-z]{3,24}$/)),
});

export function storeLexicon(trigram: Float64Array, wordsByFrequency: readonly string[]): StoredLexicon {
  // Four decimals of a natural log: the stored file stays small and scores do not move.
  return { trigram: Array.from(trigram, (v) => Math.round(v * 1e4) / 1e4), words: [...wordsByFrequency] };
}

export function lexiconOf(stored: StoredLexicon): Lexicon {
  return { trigram: Float64Array.from(stored.trigram), words: new WordTrie(stored.words) };
}
