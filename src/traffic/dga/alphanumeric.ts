import { DIGITS, LETTERS, letters, rng, type DgaFamily } from './family.ts';

/*
 * Families whose labels mix letters and digits: a PRNG over a-z0-9 or a mostly-letter alphabet
 * with digits sprinkled in, anywhere in the label.
 */

const BASE36 = LETTERS + DIGITS;

/** Qadars: 12 characters of a-z0-9 from a weekly seed. */
const qadars: DgaFamily = {
  name: 'qadars',
  kind: 'alphanumeric',
  structure: 'tld',
  description:
    'Qadars (J. Bader, Qadars write-up; DGArchive): 12 characters of a-z0-9 from a per-sample key and the week, .net/.org/.top/.com.',
  domain(seed, day, index) {
    const r = rng('qadars', seed, Math.floor(day / 7), index);
    return `${letters(r, 12, BASE36)}.${r.pick(['net', 'org', 'top', 'com'])}`;
  },
};

/**
 * Shiotob/UrlZone (Bebloh): each name is derived from the previous one; mostly letters with a few
 * digits, 10..16 characters.
 */
const shiotob: DgaFamily = {
  name: 'shiotob',
  kind: 'alphanumeric',
  structure: 'tld',
  description:
    'Shiotob/UrlZone/Bebloh (J. Bader, Shiotob write-up; DGArchive): 10..16 letters with a few digits, each name derived from the previous, .net and .com.',
  domain(seed, day, index) {
    const r = rng('shiotob', seed, day, index);
    const length = r.int(10, 16);
    let label = letters(r, 1);
    for (let i = 1; i < length; i += 1) label += letters(r, 1, r.chance(0.2) ? DIGITS : LETTERS);
    return `${label}.${r.chance(0.6) ? 'net' : 'com'}`;
  },
};

/** QSnatch: very short a-z0-9 host names under the free ccTLDs. */
const qsnatch: DgaFamily = {
  name: 'qsnatch',
  kind: 'alphanumeric',
  structure: 'tld',
  description:
    'QSnatch (J. Bader, QSnatch write-up; NCSC-FI): 5..7 characters of a-z0-9 from the date (e.g. t2q2r.cf), under the free ccTLDs .cf/.tk/.ml/.ga/.gq.',
  domain(seed, day, index) {
    const r = rng('qsnatch', seed, Math.floor(day / 7), index);
    return `${letters(r, r.int(5, 7), BASE36)}.${r.pick(['cf', 'tk', 'ml', 'ga', 'gq'])}`;
  },
};

export const ALPHANUMERIC_FAMILIES: readonly DgaFamily[] = [qadars, shiotob, qsnatch];
