import type { KeyValueStore, PartitionState } from '../../src/runtime/index.ts';

/**
 * An in-memory KeyValueStore for unit tests of stage logic: the contract's semantics (sorted range
 * with `from <= key < to`, get/put/delete/has/size) without changelogs or transactions. Values are
 * copied through JSON on put and get, as the runtime's JSON codec would, so a stage that mutates a
 * value after `put` without putting it again is caught.
 */
export class MemoryStore<V> implements KeyValueStore<V> {
  readonly #entries = new Map<string, string>();

  get(key: string): V | undefined {
    const text = this.#entries.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as V);
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  put(key: string, value: V): void {
    if (value === undefined) throw new TypeError(`put(${key}) needs a value; use delete`);
    this.#entries.set(key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  *range(bounds: { from?: string; to?: string } = {}): IterableIterator<[string, V]> {
    const keys = [...this.#entries.keys()]
      .filter(
        (key) =>
          (bounds.from === undefined || key >= bounds.from) && (bounds.to === undefined || key < bounds.to),
      )
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of keys) {
      const value = this.get(key);
      if (value !== undefined) yield [key, value];
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  /** A snapshot of every entry (tests compare state before and after a call). */
  snapshot(): Record<string, unknown> {
    return Object.fromEntries([...this.range()]);
  }
}

/** One partition's stores, created on first use, as the runtime hands them to a stage. */
export class MemoryPartitionState implements PartitionState {
  readonly #stores = new Map<string, MemoryStore<unknown>>();

  constructor(
    readonly partition: number,
    private readonly declared?: readonly string[],
  ) {}

  store<V>(name: string): KeyValueStore<V> {
    if (this.declared && !this.declared.includes(name)) throw new Error(`store ${name} is not declared`);
    let store = this.#stores.get(name);
    if (!store) {
      store = new MemoryStore<unknown>();
      this.#stores.set(name, store);
    }
    return store as KeyValueStore<V>;
  }

  /** A deep copy of every store (simulates an aborted transaction by restoring it). */
  snapshot(): Record<string, Record<string, unknown>> {
    return Object.fromEntries([...this.#stores].map(([name, store]) => [name, store.snapshot()]));
  }
}

/** Partition states by number, for building a StageContext / TimerContext in tests. */
export class MemoryState {
  readonly #partitions = new Map<number, MemoryPartitionState>();

  constructor(private readonly declared?: readonly string[]) {}

  partition(number: number): MemoryPartitionState {
    let state = this.#partitions.get(number);
    if (!state) {
      state = new MemoryPartitionState(number, this.declared);
      this.#partitions.set(number, state);
    }
    return state;
  }
}
