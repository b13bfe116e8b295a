import { DIGITS, LETTERS, digest, digestChars, isoDate, type DgaFamily } from './family.ts';

/*
 * Families that run a cryptographic hash over the date (and a seed and counter) and use the
 * digest as the name: either mapped onto letters or base36 (`hash`), or printed as hex (`hex`).
 */

const BASE36 = LETTERS + DIGITS;

/** Gameover Zeus (newGOZ): an MD5 chain mapped to base36, 20..28 characters. */
const gameover: DgaFamily = {
  name: 'gameover',
  kind: 'hash',
  structure: 'tld',
  description:
    'Gameover Zeus/newGOZ (J. Bader, newGOZ write-up; Plohmann et al.): MD5 of date, seed and counter mapped to a-z0-9, 20..28 characters, .com/.net/.org/.biz.',
  domain(seed, day, index) {
    const bytes = digest('md5', `goz:${seed}:${isoDate(day)}:${index}`);
    const more = digest('md5', bytes);
    const all = Buffer.concat([bytes, more]);
    const length = 20 + ((all[31] ?? 0) % 9);
    return `${digestChars(all, BASE36, length)}.${['com', 'net', 'org', 'biz'][(all[30] ?? 0) % 4]}`;
  },
};

/** Chinad: SHA-1 of the date and counter mapped to a-z0-9, 16 characters. */
const chinad: DgaFamily = {
  name: 'chinad',
  kind: 'hash',
  structure: 'tld',
  description:
    'Chinad (J. Bader, Chinad write-up): a table-driven hash of date and counter mapped to a-z0-9, 16 characters, .com/.org/.net/.biz/.info/.ru/.cn.',
  domain(seed, day, index) {
    const bytes = digest('sha1', `chinad/${seed}/${day}/${index}`);
    const tlds = ['com', 'org', 'net', 'biz', 'info', 'ru', 'cn'];
    return `${digestChars(bytes, BASE36, 16)}.${tlds[(bytes[19] ?? 0) % tlds.length]}`;
  },
};

/** Murofet/Licat: each MD5 byte yields letters, long names of 32..48 letters. */
const murofet: DgaFamily = {
  name: 'murofet',
  kind: 'hash',
  structure: 'tld',
  description:
    'Murofet/Licat, a Zeus offshoot (J. Bader, Murofet write-up; DGArchive): MD5 of date and counter, each byte mapped to letters, 32..48 letters, .biz/.info/.org/.net/.com/.ru.',
  domain(seed, day, index) {
    const a = digest('md5', `murofet:${seed}:${isoDate(day)}:${index}`);
    const b = digest('md5', a);
    const c = digest('md5', b);
    const bytes = Buffer.concat([a, b, c]);
    let label = '';
    for (const byte of bytes) {
      label += LETTERS[(byte & 0x1f) % 26];
      label += LETTERS[(byte >> 3) % 26];
    }
    const length = 32 + ((c[15] ?? 0) % 17);
    const tlds = ['biz', 'info', 'org', 'net', 'com', 'ru'];
    return `${label.slice(0, length)}.${tlds[(c[14] ?? 0) % tlds.length]}`;
  },
};

/** Dyre: one counter letter and 33 hex digits of SHA-256, rotating through eight ccTLDs. */
const dyre: DgaFamily = {
  name: 'dyre',
  kind: 'hex',
  structure: 'tld',
  description:
    'Dyre/Dyreza (Nominum/Akamai, "A Death Match of Domain Generation Algorithms", 2017): a counter letter plus 33 hex digits of SHA-256 of date and counter, .cc/.ws/.to/.in/.hk/.cn/.tk/.so.',
  domain(seed, day, index) {
    const hex = digest('sha256', `dyre:${seed}:${isoDate(day)}:${index}`).toString('hex');
    const tlds = ['cc', 'ws', 'to', 'in', 'hk', 'cn', 'tk', 'so'];
    return `${LETTERS[index % 26]}${hex.slice(0, 33)}.${tlds[index % tlds.length]}`;
  },
};

/** SharkBot: the first 16 hex digits of MD5(TLD, week, year), one name per TLD and week. */
const sharkbot: DgaFamily = {
  name: 'sharkbot',
  kind: 'hex',
  structure: 'tld',
  description:
    'SharkBot (NCC Group and Cleafy analyses): the first 16 hex digits of MD5 of TLD, ISO week and year, weekly, .xyz/.live/.com/.store/.info/.top/.net.',
  domain(seed, day, index) {
    const tlds = ['xyz', 'live', 'com', 'store', 'info', 'top', 'net'];
    const tld = tlds[index % tlds.length] as string;
    const week = Math.floor((day + 3) / 7);
    const hex = digest('md5', `${tld}${week}${seed}:${Math.floor(index / tlds.length)}`).toString('hex');
    return `${hex.slice(0, 16)}.${tld}`;
  },
};

/** CCleaner 2017 backdoor: `ab` and hex digits from year and month, .com. */
const ccleaner: DgaFamily = {
  name: 'ccleaner',
  kind: 'hex',
  structure: 'tld',
  description:
    'CCleaner 2017 backdoor (Cisco Talos, Avast): "ab" followed by 10..11 hex digits derived from year and month, monthly, .com.',
  domain(seed, day, index) {
    const month = isoDate(day).slice(0, 7);
    const bytes = digest('sha1', `ccleaner:${seed}:${month}:${index}`);
    const hex = bytes.toString('hex');
    return `ab${hex.slice(0, 10 + ((bytes[19] ?? 0) % 2))}.com`;
  },
};

export const HASHED_FAMILIES: readonly DgaFamily[] = [gameover, chinad, murofet, dyre, sharkbot, ccleaner];
