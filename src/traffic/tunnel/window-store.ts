import type { KeyValueStore } from '../../runtime/index.ts';

/** An in-memory key-value store with the state store's contract (range in key order), for offline scoring. */
export class MapStore<V> implements KeyValueStore<V> {
  readonly #map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.#map.get(key);
  }
  has(key: string): boolean {
    return this.#map.has(key);
  }
  put(key: string, value: V): void {
    this.#map.set(key, value);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
  *range(bounds: { from?: string; to?: string } = {}): IterableIterator<[string, V]> {
    for (const key of [...this.#map.keys()].sort()) {
      if (bounds.from !== undefined && key < bounds.from) continue;
      if (bounds.to !== undefined && key >= bounds.to) continue;
      yield [key, this.#map.get(key) as V];
    }
  }
  get size(): number {
    return this.#map.size;
  }
}
