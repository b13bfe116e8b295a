import { seededRandom } from '../random.ts';
import { vocabulary } from '../wordlist.ts';
import { rng, type DgaFamily } from './family.ts';

/*
 * Dictionary families: names made of real words, from an embedded list or a text shipped in the
 * binary, concatenated or joined with a hyphen. Each family draws its own fixed vocabulary per
 * seed (a few hundred words, as the binaries embed), so two families rarely share words.
 */

function words(family: string, seed: number, size: number): readonly string[] {
  return vocabulary(`${family}:${seed}`, seededRandom(`${family}-words:${seed}`), size);
}

/** Gozi/ISFB: words of a public text (the US Declaration of Independence, the GPL, an RFC) run together. */
const gozi: DgaFamily = {
  name: 'gozi',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Gozi/ISFB (J. Bader, Gozi write-up; DGArchive): words of an embedded public text run together without separator to 12..24 letters, .com/.ru/.net/.org.',
  domain(seed, day, index) {
    const list = words('gozi', seed, 900);
    const r = rng('gozi', seed, Math.floor(day / 7), index);
    const target = r.int(12, 24);
    let label = r.pick(list);
    while (label.length < target) label += r.pick(list);
    return `${label.slice(0, 24)}.${r.pick(['com', 'ru', 'net', 'org'])}`;
  },
};

/** Nymaim v2: a word of one list, an optional hyphen, a word of a second list. */
const nymaim2: DgaFamily = {
  name: 'nymaim2',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Nymaim v2 (J. Bader, Nymaim 2 write-up; DGArchive): a word from a first list, a hyphen or nothing, a word from a second list, under 14 gTLDs and ccTLDs.',
  domain(seed, day, index) {
    const first = words('nymaim2-first', seed, 500);
    const second = words('nymaim2-second', seed, 500);
    const r = rng('nymaim2', seed, day, index);
    const tlds = ['com', 'net', 'org', 'info', 'biz', 'ru', 'in', 'us', 'de', 'fr', 'nl', 'it', 'es', 'eu'];
    const separator = r.chance(0.5) ? '-' : '';
    return `${r.pick(first)}${separator}${r.pick(second)}.${r.pick(tlds)}`;
  },
};

/** Pizd: two words of an embedded list concatenated, .net (a Suppobox relative with its own list). */
const pizd: DgaFamily = {
  name: 'pizd',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Pizd (DGArchive; Plohmann et al. 2016): two words of an embedded list of a few hundred concatenated per time window, always .net.',
  domain(seed, day, index) {
    const list = words('pizd', seed, 400);
    const r = rng('pizd', seed, Math.floor(day / 7), index);
    return `${r.pick(list)}${r.pick(list)}.net`;
  },
};

/** Rovnix: consecutive words of the Declaration of Independence, long names under five TLDs. */
const rovnix: DgaFamily = {
  name: 'rovnix',
  kind: 'wordlist',
  structure: 'tld',
  description:
    'Rovnix (Bader and DGArchive notes; Plohmann et al.): consecutive words of the US Declaration of Independence run together to 16..30 letters, .com/.ru/.net/.biz/.cn.',
  domain(seed, day, index) {
    // The "text": a fixed word sequence per seed; names are runs of consecutive words from it.
    const text = words('rovnix', seed, 1500);
    const r = rng('rovnix', seed, day, index);
    let at = r.int(0, text.length - 1);
    const target = r.int(16, 30);
    let label = '';
    while (label.length < target) {
      label += text[at] ?? '';
      at = (at + 1) % text.length;
    }
    return `${label.slice(0, 30)}.${r.pick(['com', 'ru', 'net', 'biz', 'cn'])}`;
  },
};

export const DICTIONARY_FAMILIES: readonly DgaFamily[] = [gozi, nymaim2, pizd, rovnix];
