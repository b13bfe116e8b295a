/**
 * The keys of a committed store in ascending JavaScript string order, kept only once somebody asks
 * for a range: a store that is never iterated (a counter) pays nothing for it.
 */
export class SortedKeys {
  #keys: string[] | undefined;
  readonly #added = new Set<string>();
  readonly #removed = new Set<string>();

  /** Notes a key that became present in the committed view. */
  added(key: string): void {
    if (this.#keys === undefined) return;
    this.#removed.delete(key);
    this.#added.add(key);
  }

  /** Notes a key that left the committed view. */
  removed(key: string): void {
    if (this.#keys === undefined) return;
    this.#added.delete(key);
    this.#removed.add(key);
  }

  /** Forgets everything; the next `keys` sorts the source again. */
  reset(): void {
    this.#keys = undefined;
    this.#added.clear();
    this.#removed.clear();
  }

  /** The sorted keys, brought up to date with the changes noted since the last call. */
  keys(source: () => Iterable<string>): readonly string[] {
    if (this.#keys === undefined) {
      this.#keys = [...source()].sort();
      return this.#keys;
    }
    const changes = this.#added.size + this.#removed.size;
    if (changes === 0) return this.#keys;
    // Splicing costs O(n) per change; past a few hundred changes one sort is cheaper.
    if (changes > 256) {
      this.#keys = [...source()].sort();
    } else {
      for (const k of this.#removed) {
        const i = lowerBound(this.#keys, k);
        if (this.#keys[i] === k) this.#keys.splice(i, 1);
      }
      for (const k of this.#added) {
        const i = lowerBound(this.#keys, k);
        if (this.#keys[i] !== k) this.#keys.splice(i, 0, k);
      }
    }
    this.#added.clear();
    this.#removed.clear();
    return this.#keys;
  }
}

/** The first index whose key is >= `key`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
