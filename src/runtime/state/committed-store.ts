import { SortedKeys } from './sorted-keys.ts';

/** Read access to what the local copy holds of one store partition (a key order like the copy's). */
export interface CommittedBase {
  get(key: string): Buffer | undefined;
  /** Entries with from <= key < to, ascending. */
  range(from?: string, to?: string): Iterable<[string, Buffer]>;
  count(): number;
}

/**
 * What one store of one partition holds as of the last committed transaction (or restore): the
 * local copy (`base`, read in place, so a restart need not load it) under the committed changes
 * that have not reached the copy yet. Values stay encoded, so a stage mutating an object it put
 * cannot change the committed state behind the runtime's back.
 */
export class CommittedStore {
  /** Committed changes the base does not show yet: a value, or null for a delete. */
  readonly #overlay = new Map<string, Buffer | null>();
  readonly #sorted = new SortedKeys();
  #size: number;

  constructor(private readonly base?: CommittedBase) {
    this.#size = base?.count() ?? 0;
  }

  get(key: string): Buffer | undefined {
    const o = this.#overlay.get(key);
    if (o !== undefined) return o ?? undefined;
    return this.base?.get(key);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.#size;
  }

  /** Keys the changes since the base was read touched. */
  get overlaySize(): number {
    return this.#overlay.size;
  }

  /** A put (value) or a delete (null). */
  apply(key: string, value: Buffer | null): void {
    const was = this.has(key);
    if (!this.#overlay.has(key)) this.#sorted.added(key);
    this.#overlay.set(key, value);
    this.#size += Number(value !== null) - Number(was);
  }

  /**
   * A restored record: like `apply`, without the lookup that keeps `size` (a lookup per record
   * would halve the restore rate); `recount` once the restore is written brings `size` back.
   */
  restore(key: string, value: Buffer | null): void {
    if (!this.#overlay.has(key)) this.#sorted.added(key);
    this.#overlay.set(key, value);
  }

  /** Counts the keys present: the base's, corrected by what the overlay still holds. */
  recount(): void {
    let size = this.base?.count() ?? 0;
    for (const [key, value] of this.#overlay) {
      const inBase = this.base?.get(key) !== undefined;
      size += Number(value !== null) - Number(inBase);
    }
    this.#size = size;
  }

  /** The base now shows `value` under `key`: the overlay forgets it unless it changed since. */
  written(key: string, value: Buffer | null): void {
    if (!this.base || this.#overlay.get(key) !== value) return;
    this.#overlay.delete(key);
    this.#sorted.removed(key);
  }

  /** Present entries in [from, to), ascending. */
  *range(from?: string, to?: string): IterableIterator<[string, Buffer]> {
    const keys = this.#sorted.keys(() => this.#overlay.keys());
    const inBounds = (k: string) => (from === undefined || k >= from) && (to === undefined || k < to);
    const mine = keys.filter(inBounds);
    const base = (this.base?.range(from, to) ?? [])[Symbol.iterator]();
    let b = base.next();
    let j = 0;
    while (!b.done || j < mine.length) {
      if (!b.done && this.#overlay.has(b.value[0])) {
        b = base.next();
        continue;
      }
      if (!b.done && (j >= mine.length || b.value[0] < mine[j]!)) {
        yield b.value;
        b = base.next();
      } else {
        const v = this.#overlay.get(mine[j++]!);
        if (v) yield [mine[j - 1]!, v];
      }
    }
  }
}
