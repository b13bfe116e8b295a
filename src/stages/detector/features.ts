import { parse } from 'tldts';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const LETTER = /\p{L}/u;

/** The parts of a name that HAMSTRING's features look at. */
export interface NameParts {
  /** The whole name, lower case, without a trailing dot. */
  readonly name: string;
  /** Everything left of the registrable domain (`a.b` in `a.b.example.co.uk`); empty when none. */
  readonly thirdLevel: string;
  /** The registrable domain's own label (`example` in `a.b.example.co.uk`); empty when none. */
  readonly secondLevel: string;
}

/**
 * Splits a name with the Public Suffix List (ICANN section), so `example.co.uk` has second-level
 * label `example`, not `co`. A name that is itself a suffix or an IP address has neither part.
 */
export function nameParts(domain: string): NameParts {
  const name = domain.trim().toLowerCase().replace(/\.+$/, '');
  const parsed = parse(name);
  return {
    name,
    thirdLevel: parsed.subdomain ?? '',
    secondLevel: parsed.domainWithoutSuffix ?? '',
  };
}

/** Shannon entropy in bits per character of the string's character distribution; 0 for ''. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const n = [...text].length;
  let h = 0;
  for (const count of counts.values()) {
    const p = count / n;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Present flag and the shares of letters, digits and other characters (dots, hyphens, ...). */
function composition(text: string): [number, number, number, number] {
  if (text.length === 0) return [0, 0, 0, 0];
  let letters = 0;
  let digits = 0;
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code > 127 && LETTER.test(ch)))
      letters += 1;
    else if (code >= 48 && code <= 57) digits += 1;
  }
  const n = [...text].length;
  return [1, letters / n, digits / n, (n - letters - digits) / n];
}

/** Names of the 44 features, in the order of {@link domainFeatures}. */
export const FEATURE_NAMES: readonly string[] = [
  'label_count',
  'label_max_length',
  'name_length',
  ...[...LETTERS].map((ch) => `freq_${ch}`),
  ...['third_level', 'second_level', 'fqdn'].flatMap((part) => [
    `${part}_present`,
    `${part}_letter_ratio`,
    `${part}_digit_ratio`,
    `${part}_symbol_ratio`,
  ]),
  'fqdn_entropy',
  'third_level_entropy',
  'second_level_entropy',
];

/**
 * HAMSTRING's 44 features of a domain name:
 * 1. label count, length of the longest label, length of the name;
 * 2. the frequency of each letter a-z (occurrences / name length);
 * 3. for the third-level part, the second-level label and the whole name: present (0/1), and the
 *    shares of letters, digits and other characters (in the whole name, dots count as other);
 * 4. Shannon entropy (bits) of the whole name, the third-level part and the second-level label.
 */
export function domainFeatures(domain: string): Float64Array {
  const { name, thirdLevel, secondLevel } = nameParts(domain);
  const labels = name.length === 0 ? [] : name.split('.');
  const out = new Float64Array(FEATURE_NAMES.length);
  let i = 0;
  out[i++] = labels.length;
  out[i++] = labels.reduce((max, label) => Math.max(max, label.length), 0);
  out[i++] = name.length;
  const letterCounts = new Array<number>(26).fill(0);
  for (let k = 0; k < name.length; k += 1) {
    const code = name.charCodeAt(k) - 97;
    if (code >= 0 && code < 26) letterCounts[code] = (letterCounts[code] ?? 0) + 1;
  }
  for (const count of letterCounts) out[i++] = name.length === 0 ? 0 : count / name.length;
  for (const part of [thirdLevel, secondLevel, name]) for (const v of composition(part)) out[i++] = v;
  out[i++] = shannonEntropy(name);
  out[i++] = shannonEntropy(thirdLevel);
  out[i++] = shannonEntropy(secondLevel);
  return out;
}
