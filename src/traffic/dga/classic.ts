import { createHash } from 'node:crypto';
import { vocabulary } from '../wordlist.ts';
import { CONSONANTS, LETTERS, VOWELS, letters, rng, type DgaFamily } from './family.ts';
import { fnv1a, seededRandom } from '../random.ts';

/*
 * The eight families HAMSTRING started with, moved here unchanged: their names are pinned by
 * test/unit/traffic/dga-families.test.ts because the demo and older tests depend on them.
 */

/** Conficker-style: a date-seeded PRNG, 4..10 letters, the classic gTLDs plus ccTLDs. */
export const conficker: DgaFamily = {
  name: 'conficker',
  kind: 'arithmetic',
  structure: 'tld',
  description:
    'Conficker.A/B (SRI and Porras et al. analyses): 4..10 letters from a date-seeded PRNG under classic gTLDs and ccTLDs.',
  domain(seed, day, index) {
    const r = rng('conficker', seed, day, index);
    const tld = r.pick(['com', 'net', 'org', 'info', 'biz', 'ws', 'cn', 'cc', 'de', 'es', 'in', 'ru']);
    return `${letters(r, r.int(4, 10))}.${tld}`;
  },
};

/**
 * Necurs-style: each character from a 32-bit mixing hash of (seed, day, index) and the previous
 * state; 7..21 letters over many TLDs.
 */
export const necurs: DgaFamily = {
  name: 'necurs',
  kind: 'hash',
  structure: 'tld',
  description:
    'Necurs (DGArchive; the write-up by Bader): 7..21 letters from a mixing hash of seed, 4-day period and index, over ~40 TLDs.',
  domain(seed, day, index) {
    let h = fnv1a(`${seed}/${Math.floor(day / 4)}/${index}`);
    const mix = (): number => {
      h ^= h << 13;
      h ^= h >>> 17;
      h ^= h << 5;
      h = Math.imul(h >>> 0, 0x9e3779b1) >>> 0;
      return h;
    };
    const length = 7 + (mix() % 15);
    let name = '';
    for (let i = 0; i < length; i += 1) name += LETTERS[mix() % 25];
    const tlds = [
      'tj',
      'in',
      'jp',
      'tw',
      'ac',
      'cm',
      'la',
      'mn',
      'so',
      'sh',
      'sc',
      'nu',
      'nf',
      'mu',
      'ms',
      'mx',
      'ki',
      'im',
      'cx',
      'cc',
      'tv',
      'bz',
      'me',
      'eu',
      'de',
      'ru',
      'co',
      'su',
      'pw',
      'kz',
      'sx',
      'us',
      'ug',
      'ir',
      'to',
      'ga',
      'com',
      'net',
      'org',
      'biz',
      'xxx',
      'pro',
      'bit',
    ];
    return `${name}.${tlds[mix() % tlds.length]}`;
  },
};

/** CryptoLocker-style: 12..15 letters from a date-derived generator, a few gTLDs and co.uk. */
export const cryptolocker: DgaFamily = {
  name: 'cryptolocker',
  kind: 'arithmetic',
  structure: 'tld',
  description:
    'CryptoLocker (Dell SecureWorks; DGArchive): 12..15 letters from a date-derived generator, a few gTLDs, .ru and .co.uk.',
  domain(seed, day, index) {
    const r = rng('cryptolocker', seed, day, index);
    const tld = r.pick(['com', 'net', 'biz', 'ru', 'org', 'co.uk', 'info']);
    return `${letters(r, r.int(12, 15))}.${tld}`;
  },
};

/** Bamital-style: the hex MD5 digest of seed, date and index; .info, .org, .co.cc, .cz.cc. */
export const bamital: DgaFamily = {
  name: 'bamital',
  kind: 'hex',
  structure: 'tld',
  description:
    'Bamital (Symantec/Microsoft takedown reports): the 32-character hex MD5 of seed, date and index under .info, .org, co.cc, cz.cc.',
  domain(seed, day, index) {
    const hex = createHash('md5').update(`${seed}:${day}:${index}`).digest('hex');
    return `${hex}.${['info', 'org', 'co.cc', 'cz.cc'][index % 4]}`;
  },
};

/**
 * Banjori-style: starts from a base name (words and a short tail) and rewrites its first four
 * characters arithmetically from the previous name, so all names share the long suffix.
 */
export const banjori: DgaFamily = {
  name: 'banjori',
  kind: 'permutation',
  structure: 'tld',
  description:
    'Banjori/MultiBanker (the write-up by Bader): a base name whose first four characters are rewritten from the previous name.',
  domain(seed, _day, index) {
    const words = vocabulary(`banjori:${seed}`, seededRandom(`banjori-words:${seed}`), 40);
    const r = seededRandom(`banjori-base:${seed}`);
    const base = `${r.pick(words)}${r.pick(words)}${r.pick(words)}${letters(r, 4)}`;
    const chars = [...base];
    const at = (i: number): number => (chars[i] ?? 'a').charCodeAt(0) - 97;
    for (let step = 0; step <= index; step += 1) {
      const c0 = at(0);
      const c1 = at(1);
      const c2 = at(2);
      const c3 = at(3);
      chars[0] = LETTERS[(c0 + c3) % 26] as string;
      chars[1] = LETTERS[(c0 + 2 * c1) % 26] as string;
      chars[2] = LETTERS[(c0 + c2 - 1 + 26) % 26] as string;
      chars[3] = LETTERS[(c1 + c2 + c3) % 26] as string;
    }
    return `${chars.join('')}.com`;
  },
};

/** Suppobox-style: two words of an embedded list concatenated, mostly .net. */
export const suppobox: DgaFamily = {
  name: 'suppobox',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Suppobox (DGArchive; the analysis by Geffner): two words of an embedded list concatenated, mostly .net.',
  domain(seed, day, index) {
    const words = vocabulary(`suppobox:${seed}`, seededRandom(`suppobox-words:${seed}`), 384);
    const r = rng('suppobox', seed, day, index);
    return `${r.pick(words)}${r.pick(words)}.${r.chance(0.85) ? 'net' : 'ru'}`;
  },
};

/** Matsnu-style: verbs and nouns joined (sometimes with hyphens) until about 24 characters, .com. */
export const matsnu: DgaFamily = {
  name: 'matsnu',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Matsnu (Check Point analysis): verbs and nouns joined, half of the time with hyphens, to about 24 characters, .com.',
  domain(seed, day, index) {
    const words = vocabulary(`matsnu:${seed}`, seededRandom(`matsnu-words:${seed}`), 600);
    const r = rng('matsnu', seed, day, index);
    const hyphen = r.chance(0.5);
    let name = r.pick(words);
    while (name.length < 24) {
      const next = r.pick(words);
      if (name.length + next.length + 1 > 30) break;
      name += (hyphen ? '-' : '') + next;
    }
    return `${name}.com`;
  },
};

/** Simda-style: pronounceable consonant-vowel names of 8..11 letters. */
export const simda: DgaFamily = {
  name: 'simda',
  kind: 'pronounceable',
  structure: 'tld',
  description:
    'Simda (DGArchive; Microsoft takedown notes): 8..11-letter consonant-vowel names under .com, .net, .info, .eu, .co, .name.',
  domain(seed, day, index) {
    const r = rng('simda', seed, day, index);
    const length = r.int(8, 11);
    let name = '';
    for (let i = 0; i < length; i += 1) name += letters(r, 1, i % 2 === 0 ? CONSONANTS : VOWELS);
    return `${name}.${r.pick(['com', 'net', 'info', 'eu', 'co', 'name'])}`;
  },
};

/** The original eight, in their original order. */
export const CLASSIC_FAMILIES: readonly DgaFamily[] = [
  conficker,
  necurs,
  cryptolocker,
  bamital,
  banjori,
  suppobox,
  matsnu,
  simda,
];
