import { createRequire } from 'node:module';
import type { Random } from './random.ts';

const require = createRequire(import.meta.url);

let cached: readonly string[] | undefined;
let plainWords: readonly string[] | undefined;
const vocabularies = new Map<string, string[]>();
const OFFENSIVE =
  /sex|porn|fuck|shit|cunt|dick|cock|vagin|penis|anal|rape|nigg|fag|slut|whore|bitch|nazi|kill|murder|suicid|boob|butt|piss|twat|wank|bastard|damn|crap/;

/** The English word list the `an-array-of-english-words` package ships (about 275,000 words). */
export function englishWords(): readonly string[] {
  cached ??= require('an-array-of-english-words') as string[];
  return cached;
}

/**
 * A fixed vocabulary of `size` plain words of 3..8 letters, drawn by `random` (remembered under
 * `key`): dictionary DGAs embed a few hundred words in the binary, not a whole dictionary.
 */
export function vocabulary(key: string, random: Random, size: number): readonly string[] {
  const known = vocabularies.get(key);
  if (known) return known;
  // Generated names are shown in the demo's terminal and dashboard: leave out offensive words.
  plainWords ??= englishWords().filter((w) => /^[a-z]{3,8}$/.test(w) && !OFFENSIVE.test(w));
  const picked = new Set<string>();
  while (picked.size < Math.min(size, plainWords.length)) picked.add(random.pick(plainWords));
  const words = [...picked];
  vocabularies.set(key, words);
  return words;
}
