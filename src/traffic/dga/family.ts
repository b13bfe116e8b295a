import { createHash } from 'node:crypto';
import { fnv1a, seededRandom, type Random } from '../random.ts';

/** How a family builds its names (the evaluation groups families by it). */
export type DgaKind =
  'arithmetic' | 'hash' | 'hex' | 'alphanumeric' | 'wordlist' | 'permutation' | 'pronounceable';

/**
 * Where the generated label sits in the queried name: straight under a TLD (`<dga>.com`), as the
 * customer label under a dynamic-DNS or free-subdomain parent (`<dga>.ddns.net`), or behind a host
 * label put in front of the generated registrable name (`ns1.<dga>.com`, `<data>.<dga>.com`).
 */
export type DgaStructure = 'tld' | 'parent' | 'host-label';

/**
 * A DGA family written from its public description (malware analyses, DGArchive family pages,
 * Johannes Bader's write-ups, Plohmann et al., USENIX Security 2016): the same kind of names,
 * lengths, alphabets, TLDs and parents, not a bit-exact reimplementation of any sample. Each
 * generator is a pure function of (seed, day, index), as real DGAs are of their seed and date.
 */
export interface DgaFamily {
  readonly name: string;
  /** How the family builds names (shown in reports). */
  readonly kind: DgaKind;
  /** Where the generated label sits in the name (see {@link DgaStructure}). */
  readonly structure: DgaStructure;
  /** One line: what the family looks like and which public description it follows. */
  readonly description: string;
  /** The `index`-th name of `day` (days since the epoch) for a malware seed. */
  domain(seed: number, day: number, index: number): string;
}

export const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** a..y: several families lose the `z` to an off-by-one (Bader's CoreBot write-up lists them). */
export const LETTERS_NO_Z = 'abcdefghijklmnopqrstuvwxy';
export const DIGITS = '0123456789';
export const VOWELS = 'aeiou';
export const CONSONANTS = 'bcdfghjklmnpqrstvwxz';

/** `length` characters of `alphabet`, drawn by `random`. */
export function letters(random: Random, length: number, alphabet = LETTERS): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[random.int(0, alphabet.length - 1)];
  return out;
}

/** The PRNG of one name: a pure function of the family, seed, time window and index. */
export function rng(family: string, seed: number, window: number, index: number): Random {
  return seededRandom(fnv1a(`${family}:${seed}:${window}:${index}`));
}

/** A digest of `text` (or of bytes, to chain digests) as bytes. */
export function digest(algorithm: 'md5' | 'sha1' | 'sha256', text: string | Uint8Array): Buffer {
  return createHash(algorithm).update(text).digest();
}

/** Digest bytes mapped onto `alphabet` (each byte modulo the alphabet), `length` characters long. */
export function digestChars(bytes: Uint8Array, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[(bytes[i % bytes.length] ?? 0) % alphabet.length];
  return out;
}

/** `YYYY-MM-DD` of a day since the epoch. */
export function isoDate(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Alternating consonants and vowels, starting with a consonant when `consonantFirst`. */
export function syllables(random: Random, length: number, consonantFirst = true): string {
  let out = '';
  for (let i = 0; i < length; i += 1)
    out += letters(random, 1, (i % 2 === 0) === consonantFirst ? CONSONANTS : VOWELS);
  return out;
}
