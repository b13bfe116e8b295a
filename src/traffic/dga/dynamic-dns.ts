import { LETTERS, digest, isoDate, letters, rng, syllables, type DgaFamily } from './family.ts';

/*
 * Families whose generated label is a customer name under someone else's zone: a dynamic-DNS or
 * free-subdomain provider (ddns.net, duckdns.org, dyndns.org, ...) or one fixed attacker-owned
 * parent. Registration costs nothing, so the registrable part (`ddns.net`) is benign and popular:
 * only the leftmost label carries the DGA.
 */

/** Symmi/MewsSpy: vowel/consonant pairs, 8..15 letters, under ddns.net; one list per half month. */
const symmi: DgaFamily = {
  name: 'symmi',
  kind: 'pronounceable',
  structure: 'parent',
  description:
    'Symmi/MewsSpy (J. Bader, Symmi write-up, 2015): 8..15-letter names of vowel/consonant pairs, a new list every half month, as third-level names under ddns.net.',
  domain(seed, day, index) {
    const date = new Date(day * 86_400_000);
    const half = (date.getUTCFullYear() * 12 + date.getUTCMonth()) * 2 + (date.getUTCDate() <= 16 ? 0 : 1);
    const r = rng('symmi', seed, half, index);
    let label = '';
    const length = r.int(8, 15);
    while (label.length < length) {
      // Pairs: a consonant and a vowel, or two vowels, as in the write-up's examples.
      label += r.chance(0.75) ? syllables(r, 2) : letters(r, 2, 'aeiou');
    }
    return `${label.slice(0, length)}.ddns.net`;
  },
};

/** CoreBot: a-y and 0-8 (the off-by-one charset), 12..23 characters, under ddns.net. */
const corebot: DgaFamily = {
  name: 'corebot',
  kind: 'alphanumeric',
  structure: 'parent',
  description:
    'CoreBot (J. Bader, CoreBot write-up, 2015; IBM X-Force): 12..23 characters of "a..y0..8" from a daily seed, as subdomains of ddns.net.',
  domain(seed, day, index) {
    const r = rng('corebot', seed, day, index);
    return `${letters(r, r.int(12, 23), 'abcdefghijklmnopqrstuvwxy012345678')}.ddns.net`;
  },
};

/** Kraken/Bobax: pronounceable names with English-looking endings under four dynamic-DNS zones. */
const kraken: DgaFamily = {
  name: 'kraken',
  kind: 'pronounceable',
  structure: 'parent',
  description:
    'Kraken/Bobax v1 (Royal, Damballa 2008; DGArchive): 6..11-letter pronounceable names, sometimes with an English ending, under dyndns.org, yi.org, dynserv.com and mooo.com.',
  domain(seed, day, index) {
    const r = rng('kraken', seed, Math.floor(day / 3), index);
    let label = syllables(r, r.int(5, 9), r.chance(0.7));
    if (r.chance(0.35)) label += r.pick(['er', 'ing', 'ly', 'able', 'ment', 'ous', 'ed', 'es']);
    return `${label}.${r.pick(['dyndns.org', 'yi.org', 'dynserv.com', 'mooo.com'])}`;
  },
};

/** Orchard: the MD5 of the date string written with letters (one per nibble), under duckdns.org. */
const orchard: DgaFamily = {
  name: 'orchard',
  kind: 'hash',
  structure: 'parent',
  description:
    'Orchard (360 Netlab 2022; Bader, "A DGA seeded by the Bitcoin genesis block"): MD5 of a date string with each nibble written as a..p, 16..24 letters, under duckdns.org.',
  domain(seed, day, index) {
    const hex = digest('md5', `${isoDate(day)}#${seed}#${index}`).toString('hex');
    let label = '';
    for (const nibble of hex) label += LETTERS[parseInt(nibble, 16)];
    return `${label.slice(0, 16 + (index % 9))}.duckdns.org`;
  },
};

/**
 * SUNBURST (SolarWinds Orion backdoor): an encoded victim id and host name in a custom base32
 * alphabet, as the leftmost label under one attacker zone split by cloud region.
 */
const sunburst: DgaFamily = {
  name: 'sunburst',
  kind: 'alphanumeric',
  structure: 'parent',
  description:
    'SUNBURST (FireEye/Mandiant and Microsoft analyses, 2020): 16..32 characters of a custom base32 (letters and digits) under appsync-api.<region>.avsvmcloud.com.',
  domain(seed, day, index) {
    const r = rng('sunburst', seed, day, index);
    const alphabet = 'ph2eifo3n5utg1j8d94qrvbmk0sal76c';
    // The first 15 characters are the encoded victim id: fixed per seed; the rest varies.
    const victim = letters(rng('sunburst-victim', seed, 0, 0), 15, alphabet);
    const region = r.pick(['eu-west-1', 'us-west-2', 'us-east-1', 'us-east-2']);
    return `${victim}${letters(r, r.int(4, 17), alphabet)}.appsync-api.${region}.avsvmcloud.com`;
  },
};

export const DYNAMIC_DNS_FAMILIES: readonly DgaFamily[] = [symmi, corebot, kraken, orchard, sunburst];
