import type { Random } from '../random.ts';

/**
 * Encodings tunnels use to fit bytes into host names. Every alphabet here keeps names within the
 * collector's shipped `domain_name` pattern (letters, digits, inner hyphens), because a name outside
 * it never reaches a detector: tools' base64/base128 codecs with `+`, `_` or 8-bit bytes are shown
 * with those characters mapped to `-` or letters, which changes nothing the Domainator measures
 * after it lower-cases the name.
 */
export const BASE32_RFC4648 = 'abcdefghijklmnopqrstuvwxyz234567';
/** iodine's Base32 alphabet (`a-z0-5`). */
export const BASE32_IODINE = 'abcdefghijklmnopqrstuvwxyz012345';
/** Base64 with `+`/`/` (or `_`) as `-`: as a DNS-safe log shows it. */
export const BASE64_DNS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789--';
export const HEX = '0123456789abcdef';

export function randomBytes(r: Random, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) out[i] = r.int(0, 255);
  return out;
}

const WORDS = [
  'invoice',
  'account',
  'password',
  'customer',
  'order',
  'total',
  'email',
  'name',
  'address',
  'payment',
  'card',
  'date',
  'report',
  'salary',
  'user',
  'admin',
  'secret',
  'backup',
  'config',
  'token',
  'id',
  'the',
  'and',
  'of',
  'to',
  'in',
  'for',
  'is',
  'on',
  'with',
];

/** Plain text (CSV-like records of words and numbers): the low-entropy payload of exfiltrated files. */
export function textBytes(r: Random, n: number): Uint8Array {
  let s = '';
  while (s.length < n) {
    s += r.chance(0.3) ? String(r.int(0, 99_999)) : r.pick(WORDS);
    s += r.chance(0.15) ? '\n' : r.chance(0.5) ? ',' : ' ';
  }
  return new TextEncoder().encode(s.slice(0, n));
}

/** Base-2^k encoding over an alphabet of 2^k symbols (5 bits: base32, 6: base64, 4: hex), no padding. */
export function encodeBits(bytes: Uint8Array, alphabet: string): string {
  const bits = Math.log2(alphabet.length);
  if (!Number.isInteger(bits)) throw new RangeError('alphabet size must be a power of two');
  let out = '';
  let buffer = 0;
  let held = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    held += 8;
    while (held >= bits) {
      held -= bits;
      out += alphabet[(buffer >> held) & (alphabet.length - 1)];
    }
    buffer &= (1 << held) - 1;
  }
  if (held > 0) out += alphabet[(buffer << (bits - held)) & (alphabet.length - 1)];
  return out;
}

export const base32 = (bytes: Uint8Array, alphabet = BASE32_RFC4648) => encodeBits(bytes, alphabet);
export const hex = (bytes: Uint8Array) => encodeBits(bytes, HEX);
export const base64dns = (bytes: Uint8Array) => encodeBits(bytes, BASE64_DNS);

/** Hex of an unsigned integer, zero-padded to `digits`. */
export function hexInt(value: number, digits: number): string {
  return (value >>> 0).toString(16).padStart(digits, '0').slice(-digits);
}

/**
 * Splits an encoded payload into labels of at most `size` characters (DNS allows 63) and mends
 * hyphens at a label's ends, which host names may not have.
 */
export function labels(payload: string, size = 63): string {
  const parts: string[] = [];
  for (let i = 0; i < payload.length; i += size) parts.push(mendLabel(payload.slice(i, i + size)));
  return parts.join('.');
}

export function mendLabel(label: string): string {
  return label.replace(/^-/, 'a').replace(/-$/, 'z');
}

/**
 * Bytes of payload that fit in one query: names are at most 253 characters, so what is left after
 * the domain, the fixed labels and one dot per 63 characters, at `bitsPerChar`.
 */
export function capacity(domain: string, fixedChars: number, bitsPerChar: number, maxName = 253): number {
  const free = maxName - domain.length - 1 - fixedChars;
  const chars = free - Math.ceil(free / 64);
  return Math.max(1, Math.floor((chars * bitsPerChar) / 8));
}
