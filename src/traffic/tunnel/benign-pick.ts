import type { Random } from '../random.ts';
import { HEX, hexInt } from './encoding.ts';

/** A random string over `alphabet`. */
export function randomString(r: Random, alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i += 1) s += alphabet[r.int(0, alphabet.length - 1)];
  return s;
}

export const LOWER_DIGITS = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const randomHex = (r: Random, n: number) => randomString(r, HEX, n);

/**
 * A host's working set of names: `size` names made once, then looked up again and again, the
 * popular ones most (a stub resolver asks again when its cached answer expires).
 */
export function workingSet(r: Random, size: number, make: (k: number) => string): () => string {
  const names = Array.from({ length: size }, (_, k) => make(k));
  return () => names[Math.min(names.length - 1, Math.floor(names.length * r.next() ** 2))] as string;
}

const WORDS = [
  'prod',
  'dev',
  'staging',
  'assets',
  'logs',
  'backup',
  'media',
  'images',
  'static',
  'data',
  'app',
  'web',
  'api',
  'reports',
  'uploads',
  'cdn',
  'build',
  'artifacts',
  'shop',
  'portal',
  'files',
];

/** `prod-assets`, `logs-eu-7` and the like: names people give buckets, load balancers, accounts. */
export function serviceName(r: Random, words = 2): string {
  const parts = Array.from({ length: words }, () => r.pick(WORDS));
  if (r.chance(0.4)) parts.push(String(r.int(1, 99)));
  return parts.join('-');
}

/** An IPv4 address as four numbers. */
export function ipv4(r: Random, first = r.int(1, 223)): number[] {
  return [first, r.int(0, 255), r.int(0, 255), r.int(1, 254)];
}

/** The 32 nibbles of an IPv6 address in the given /64 prefix (16 hex chars) with a random interface id. */
export function ipv6Nibbles(r: Random, prefix64: string): string[] {
  return `${prefix64}${hexInt(r.int(0, 0xffffffff), 8)}${hexInt(r.int(0, 0xffffffff), 8)}`.split('');
}
