import { seededRandom } from '../random.ts';
import { vocabulary } from '../wordlist.ts';
import { DIGITS, LETTERS, digest, letters, rng, type DgaFamily } from './family.ts';

/*
 * Families whose queried name has a host label in front of the registrable name: a fixed one
 * (`ns1.`, `www.`, `api.`) or a random/encoded one (data smuggled out over DNS, or fresh
 * subdomains under hijacked domains). A detector that only looks at the leftmost label, or only
 * at the registrable name, sees half the picture.
 */

/** Beebone/Changeup: `ns1.` in front of a word with a counter, five gTLDs. */
const beebone: DgaFamily = {
  name: 'beebone',
  kind: 'wordlist',
  structure: 'host-label',
  description:
    'Beebone/Changeup (modelled on DGArchive beebone samples, 2015 takedown): "ns1." in front of an embedded word and a counter, e.g. ns1.<word><n>.biz, under five gTLDs.',
  domain(seed, day, index) {
    const words = vocabulary(`beebone:${seed}`, seededRandom(`beebone-words:${seed}`), 40);
    const r = rng('beebone', seed, Math.floor(day / 7), index);
    return `ns1.${r.pick(words)}${r.int(0, 999)}.${r.pick(['com', 'net', 'org', 'biz', 'info'])}`;
  },
};

/**
 * Xshellghost/ShadowPad: a monthly DGA domain (10..16 letters, .com); the C2 talks over DNS by
 * putting encrypted data, written with the letters a..p (one per nibble), in front of it.
 */
const xshellghost: DgaFamily = {
  name: 'xshellghost',
  kind: 'arithmetic',
  structure: 'host-label',
  description:
    'Xshellghost/ShadowPad (360 Netlab and Kaspersky, 2017): a monthly 10..16-letter .com DGA name with DNS-tunnelled data written as a..p labels in front of it.',
  domain(seed, day, index) {
    const date = new Date(day * 86_400_000);
    const month = date.getUTCFullYear() * 12 + date.getUTCMonth();
    const d = rng('xshellghost', seed, month, 0);
    const registrable = `${letters(d, d.int(10, 16))}.com`;
    const data = digest('sha256', `xshellghost:${seed}:${day}:${index}`);
    let encoded = '';
    for (const byte of data) encoded += `${LETTERS[byte >> 4]}${LETTERS[byte & 15]}`;
    const length = 16 + ((data[31] ?? 0) % 48);
    const labels = encoded.slice(0, length).match(/.{1,40}/g) ?? [encoded.slice(0, 16)];
    return `${labels.join('.')}.${registrable}`;
  },
};

/**
 * Domain shadowing (Angler exploit kit): fresh random subdomains created under legitimate domains
 * whose registrar accounts were stolen; the registrable names are ordinary word names.
 */
const shadowing: DgaFamily = {
  name: 'shadowing',
  kind: 'alphanumeric',
  structure: 'host-label',
  description:
    'Angler EK domain shadowing (Cisco Talos, 2015): random 6..16-character letter-and-digit subdomains created under a few hijacked legitimate domains.',
  domain(seed, day, index) {
    const words = vocabulary(`shadowing:${seed}`, seededRandom(`shadowing-words:${seed}`), 24);
    const r = rng('shadowing', seed, day, index);
    const pick = r.int(0, 7);
    const owner = seededRandom(`shadowing-owner:${seed}:${pick}`);
    const hijacked = `${owner.pick(words)}${owner.pick(words)}.${owner.pick(['com', 'net', 'org', 'info'])}`;
    let label = letters(r, 1);
    const length = r.int(6, 16);
    while (label.length < length) label += letters(r, 1, r.chance(0.3) ? DIGITS : LETTERS);
    return `${label}.${hijacked}`;
  },
};

/**
 * Cobalt Strike DNS beacon: a request-type prefix label, hex-encoded data and a beacon id in
 * front of the operator's domain.
 */
const cobaltstrike: DgaFamily = {
  name: 'cobaltstrike',
  kind: 'hex',
  structure: 'host-label',
  description:
    'Cobalt Strike DNS beacon (Malleable C2 documentation; public detection write-ups): www/api/cdn/post/www6 prefixes, hex data and a hex beacon id in front of one C2 domain.',
  domain(seed, day, index) {
    const c = seededRandom(`cobaltstrike-c2:${seed}`);
    const words = vocabulary(`cobaltstrike:${seed}`, seededRandom(`cobaltstrike-words:${seed}`), 16);
    const c2 = `${c.pick(words)}-${c.pick(words)}.${c.pick(['com', 'net', 'io', 'online'])}`;
    const beacon = digest('md5', `cobaltstrike-id:${seed}`).toString('hex').slice(0, 8);
    const r = rng('cobaltstrike', seed, day, index);
    const prefix = r.pick(['www', 'api', 'cdn', 'post', 'www6']);
    const data = digest('sha256', `cobaltstrike:${seed}:${day}:${index}`).toString('hex');
    return `${prefix}.${data.slice(0, r.int(8, 56))}.${beacon}.${c2}`;
  },
};

export const HOST_LABEL_FAMILIES: readonly DgaFamily[] = [beebone, xshellghost, shadowing, cobaltstrike];
