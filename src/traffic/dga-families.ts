import { ALPHANUMERIC_FAMILIES } from './dga/alphanumeric.ts';
import { ARITHMETIC_FAMILIES } from './dga/arithmetic.ts';
import { CLASSIC_FAMILIES } from './dga/classic.ts';
import { DICTIONARY_FAMILIES } from './dga/dictionary.ts';
import { DYNAMIC_DNS_FAMILIES } from './dga/dynamic-dns.ts';
import type { DgaFamily } from './dga/family.ts';
import { HASHED_FAMILIES } from './dga/hashed.ts';
import { HOST_LABEL_FAMILIES } from './dga/host-label.ts';

/**
 * DGA families written from their public descriptions (malware analyses, DGArchive family pages,
 * Johannes Bader's write-ups, Plohmann et al., USENIX Security 2016): the same kind of names,
 * lengths, alphabets, TLDs and parents, but not bit-exact reimplementations of any sample's
 * algorithm. Each generator is a pure function of (seed, day, index), as real DGAs are of their
 * seed and date, so infected hosts and training data are reproducible. The families live in
 * ./dga/, one file per way of building names or of placing them in the DNS tree.
 */
export type { DgaFamily, DgaKind, DgaStructure } from './dga/family.ts';

/** Every family, by name: the original eight first, in their original order. */
export const DGA_FAMILIES: readonly DgaFamily[] = [
  ...CLASSIC_FAMILIES,
  ...ARITHMETIC_FAMILIES,
  ...HASHED_FAMILIES,
  ...ALPHANUMERIC_FAMILIES,
  ...DICTIONARY_FAMILIES,
  ...DYNAMIC_DNS_FAMILIES,
  ...HOST_LABEL_FAMILIES,
];

export function dgaFamily(name: string): DgaFamily {
  const family = DGA_FAMILIES.find((f) => f.name === name);
  if (!family)
    throw new RangeError(`unknown DGA family ${name} (known: ${DGA_FAMILIES.map((f) => f.name).join(', ')})`);
  return family;
}
