import { seededRandom, type Random } from '../random.ts';

/** One list of benign DNS names: real names from a shipped list, or names made by a documented scheme. */
export interface BenignSource {
  /** Short id used in reports and for leave-one-source-out evaluation, e.g. 'top-sites', 'cloud-patterns'. */
  readonly name: string;
  /** 'real' = names taken from a shipped list; 'pattern' = generated from a documented naming scheme. */
  readonly origin: 'real' | 'pattern';
  /** What it holds, where it comes from: package@version and licence for real lists; the scheme for patterns. */
  readonly description: string;
  /** Up to `count` distinct lower-case hostnames (no trailing dot), deterministic for (seed, count). */
  names(seed: number, count: number): string[];
}

/**
 * A DNS name as resolvers see them: at most 253 characters, labels of 1..63 letters, digits and inner
 * hyphens (RFC 1123), lower case, no trailing dot. A label may start with one underscore: the
 * "attribute leaf" labels of SRV, DKIM and DMARC names (`_sip._tcp`, `_domainkey`, RFC 8552).
 */
export function isHostname(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (labels.length < 2) return false;
  return labels.every((l) => /^_?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l) && l.length <= 63);
}

/** The random stream of one source for one seed: sources with the same seed draw independently. */
export function sourceRandom(source: string, seed: number): Random {
  return seededRandom(seed).fork(`benign:${source}`);
}

/**
 * A source over a real list, loaded on first use and cached. `names` is a seeded sample without
 * replacement (a partial Fisher-Yates shuffle, so a smaller count is a prefix of a larger one); all
 * names, in a seeded order, when count >= the list's size.
 */
export function realListSource(
  name: string,
  description: string,
  load: () => readonly string[],
): BenignSource {
  let cached: readonly string[] | undefined;
  const list = (): readonly string[] => {
    cached ??= [...new Set(load().map((n) => n.toLowerCase().replace(/\.$/, '')))].filter(isHostname);
    return cached;
  };
  return {
    name,
    origin: 'real',
    description,
    names(seed, count) {
      const pool = [...list()];
      const n = Math.max(0, Math.min(Math.floor(count), pool.length));
      const random = sourceRandom(name, seed);
      for (let i = 0; i < n; i += 1) {
        const j = random.int(i, pool.length - 1);
        const t = pool[i] as string;
        pool[i] = pool[j] as string;
        pool[j] = t;
      }
      return pool.slice(0, n);
    },
  };
}

/**
 * A source that draws names from `make` until it has `count` distinct valid ones (or gives up after
 * many repeats: a scheme with few possible names returns fewer). Invalid names are a bug in the scheme
 * and throw.
 */
export function patternSource(
  name: string,
  description: string,
  make: (random: Random) => string,
): BenignSource {
  return {
    name,
    origin: 'pattern',
    description,
    names(seed, count) {
      const random = sourceRandom(name, seed);
      const out = new Set<string>();
      const want = Math.max(0, Math.floor(count));
      let misses = 0;
      while (out.size < want && misses < 200 + want) {
        const host = make(random).toLowerCase();
        if (!isHostname(host)) throw new Error(`${name} made an invalid hostname: ${host}`);
        if (out.has(host)) misses += 1;
        else out.add(host);
      }
      return [...out];
    },
  };
}
