import { parse } from 'tldts';

/** The parts of a name the Domainator groups and measures by (the DGA features: `dga-features/`). */
export interface NameParts {
  /** The whole name, lower case, without a trailing dot. */
  readonly name: string;
  /** Everything left of the registrable domain (`a.b` in `a.b.example.co.uk`); empty when none. */
  readonly thirdLevel: string;
  /** The registrable domain's own label (`example` in `a.b.example.co.uk`); empty when none. */
  readonly secondLevel: string;
}

/**
 * Splits a name with the Public Suffix List (ICANN section), so `example.co.uk` has second-level
 * label `example`, not `co`. A name that is itself a suffix or an IP address has neither part.
 */
export function nameParts(domain: string): NameParts {
  const name = domain.trim().toLowerCase().replace(/\.+$/, '');
  const parsed = parse(name);
  return {
    name,
    thirdLevel: parsed.subdomain ?? '',
    secondLevel: parsed.domainWithoutSuffix ?? '',
  };
}

/** Shannon entropy in bits per character of the string's character distribution; 0 for ''. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const n = [...text].length;
  let h = 0;
  for (const count of counts.values()) {
    const p = count / n;
    h -= p * Math.log2(p);
  }
  return h;
}
