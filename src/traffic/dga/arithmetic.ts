import { LETTERS, LETTERS_NO_Z, letters, rng, type DgaFamily } from './family.ts';

/*
 * Letter-only families whose names come from a seeded PRNG, arithmetic on the date or an encoding
 * of it: they differ in what they differ in reality — length range, alphabet, TLD set and how often
 * the list changes (every day, every few days, or never: some are seeded by a constant only).
 */

interface LetterSpec {
  readonly name: string;
  readonly description: string;
  /** Shortest and longest label. */
  readonly length: readonly [number, number];
  readonly tlds: readonly string[];
  readonly alphabet?: string;
  /** The time window a day falls in (the list changes when it does); default the day itself. */
  readonly window?: (day: number) => number;
}

const seedOnly = (): number => 0;

function letterFamily(spec: LetterSpec): DgaFamily {
  const window = spec.window ?? ((day: number) => day);
  return {
    name: spec.name,
    kind: 'arithmetic',
    structure: 'tld',
    description: spec.description,
    domain(seed, day, index) {
      const r = rng(spec.name, seed, window(day), index);
      const label = letters(r, r.int(spec.length[0], spec.length[1]), spec.alphabet ?? LETTERS);
      return `${label}.${r.pick(spec.tlds)}`;
    },
  };
}

/**
 * Sisron: the date (DDMMYYYY) in base64, lower-cased without padding, walking back one day at a
 * time; the names look like `mtewnziwmtu`. Base64 of these digits never yields a digit (the fourth
 * character of a group is one only when the group's third byte is 4..9: never the month's tens
 * digit nor the century's 2), so the names are letters from a small, telltale subset.
 */
const sisron: DgaFamily = {
  name: 'sisron',
  kind: 'arithmetic',
  structure: 'tld',
  description:
    'Sisron (J. Bader, Sisron write-up; DGArchive): the base64 of the date, lower-cased without padding, going back day by day, .com/.org/.net/.info.',
  domain(seed, day, index) {
    const tlds = ['com', 'org', 'net', 'info'];
    // The seed only shifts the starting date (real Sisron has none): one date per four indexes.
    const date = new Date((day - (seed % 97) - Math.floor(index / tlds.length)) * 86_400_000);
    const text = `${String(date.getUTCDate()).padStart(2, '0')}${String(date.getUTCMonth() + 1).padStart(2, '0')}${date.getUTCFullYear()}`;
    const label = Buffer.from(text).toString('base64').replace(/=+$/, '').toLowerCase();
    return `${label}.${tlds[index % tlds.length]}`;
  },
};

export const ARITHMETIC_FAMILIES: readonly DgaFamily[] = [
  letterFamily({
    name: 'ramnit',
    description:
      'Ramnit (J. Bader, Ramnit write-up; DGArchive): 8..19 letters a..y from an LCG on a hard-coded seed, date-independent, .com.',
    length: [8, 19],
    alphabet: LETTERS_NO_Z,
    tlds: ['com'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'pykspa',
    description:
      'Pykspa (J. Bader, Pykspa write-up; Plohmann et al. 2016): 6..12 letters changing every other day, .com/.net/.org/.info/.cc.',
    length: [6, 12],
    tlds: ['com', 'net', 'org', 'info', 'cc'],
    window: (day) => Math.floor(day / 2),
  }),
  letterFamily({
    name: 'qakbot',
    description:
      'Qakbot (J. Bader, Qakbot write-up; DGArchive): 8..25 letters from a seed that changes every ten days, six gTLD/ccTLDs.',
    length: [8, 25],
    tlds: ['com', 'net', 'org', 'info', 'biz', 'in'],
    window: (day) => Math.floor(day / 10),
  }),
  letterFamily({
    name: 'ranbyus',
    description:
      'Ranbyus (J. Bader, Ranbyus write-up): 14 letters a..y per day from a shift-register PRNG, .in/.me/.cc/.su/.tw/.net/.com/.pw/.org.',
    length: [14, 14],
    alphabet: LETTERS_NO_Z,
    tlds: ['in', 'me', 'cc', 'su', 'tw', 'net', 'com', 'pw', 'org'],
  }),
  letterFamily({
    name: 'tinba',
    description:
      'Tinba (Bader and Plohmann, DGArchive): 12 letters each derived from the previous name and a hard-coded seed, .com (later .net/.in/.biz).',
    length: [12, 12],
    tlds: ['com', 'com', 'com', 'net', 'in', 'biz'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'locky',
    description:
      'Locky v2 (Forcepoint and Bader write-ups): 7..17 letters from the date and a per-sample seed, .ru/.info/.biz/.click/.su/.work/.pl/.org/.pw/.xyz.',
    length: [7, 17],
    tlds: ['ru', 'info', 'biz', 'click', 'su', 'work', 'pl', 'org', 'pw', 'xyz'],
  }),
  letterFamily({
    name: 'ramdo',
    description:
      'Ramdo (J. Bader, Ramdo write-up; DGArchive): 16 letters from a hard-coded seed only, always .org.',
    length: [16, 16],
    tlds: ['org'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'fobber',
    description:
      'Fobber v1 (J. Bader, Fobber write-up): 10 letters chained from a hard-coded seed, always .net.',
    length: [10, 10],
    tlds: ['net'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'vawtrak',
    description:
      'Vawtrak (modelled on DGArchive vawtrak samples): 7..11 letters from a per-sample seeded LCG, mostly .ru, some .com.',
    length: [7, 11],
    tlds: ['ru', 'ru', 'com'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'emotet',
    description:
      'Emotet/Geodo (J. Bader, Emotet write-up; Plohmann et al.): 16 letters a..y (the missing-z off-by-one), always .eu.',
    length: [16, 16],
    alphabet: LETTERS_NO_Z,
    tlds: ['eu'],
  }),
  letterFamily({
    name: 'dircrypt',
    description:
      'DirCrypt (Check Point analysis; J. Bader, DirCrypt write-up): 8..20 letters from a seed-only LCG, always .com.',
    length: [8, 20],
    tlds: ['com'],
    window: seedOnly,
  }),
  letterFamily({
    name: 'padcrypt',
    description:
      'PadCrypt (J. Bader, PadCrypt write-up): 16 characters from the eleven letters a-f and k-o, daily, .com/.co.uk/.de/.org/.net/.eu/.info/.online/.co/.cc/.website.',
    length: [16, 16],
    alphabet: 'abcdefklmno',
    tlds: ['com', 'co.uk', 'de', 'org', 'net', 'eu', 'info', 'online', 'co', 'cc', 'website'],
  }),
  letterFamily({
    name: 'virut',
    description:
      'Virut (Sophos and NASK analyses; DGArchive): short 6-letter names from the time, always .com.',
    length: [6, 6],
    tlds: ['com'],
  }),
  letterFamily({
    name: 'zloader',
    description:
      'ZLoader (J. Bader, ZLoader write-up; Malwarebytes): 32 names a day of exactly 20 letters from an RC4-keyed generator, .com.',
    length: [20, 20],
    tlds: ['com'],
  }),
  sisron,
];
