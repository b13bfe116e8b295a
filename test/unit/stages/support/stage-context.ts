import { silentLogger } from '../../../../src/observability/logger.ts';
import type {
  KeyValueStore,
  PartitionState,
  StageContext,
  StageRecord,
  TimerContext,
} from '../../../../src/runtime/index.ts';

/**
 * An in-memory key-value store with the contract's semantics (sorted range, size), for unit tests
 * of stage decisions; the runtime's real stores are tested with the runtime.
 */
export class MapStore<V> implements KeyValueStore<V> {
  readonly #map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.#map.get(key);
  }
  has(key: string): boolean {
    return this.#map.has(key);
  }
  put(key: string, value: V): void {
    // Stores hand out copies through their codec; a stage must not rely on mutating what it read.
    this.#map.set(key, structuredClone(value));
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

/** Stores per partition and store name, created on first use. */
export class MemoryState {
  readonly #stores = new Map<string, MapStore<unknown>>();
  partition(partition: number): PartitionState {
    return {
      partition,
      store: <V>(name: string) => {
        const key = `${partition}/${name}`;
        let store = this.#stores.get(key);
        if (!store) {
          store = new MapStore<unknown>();
          this.#stores.set(key, store);
        }
        return store as unknown as KeyValueStore<V>;
      },
    };
  }
}

export function stageContext(state = new MemoryState()): StageContext {
  return {
    signal: new AbortController().signal,
    log: silentLogger(),
    epoch: 1,
    state: (p) => state.partition(p),
  };
}

export function timerContext(state: MemoryState, partition: number, now: number): TimerContext {
  return {
    signal: new AbortController().signal,
    log: silentLogger(),
    epoch: 1,
    partition,
    now,
    state: state.partition(partition),
  };
}

export function record(
  topic: string,
  offset: number,
  value: unknown,
  key: string | null = null,
  partition = 0,
): StageRecord {
  return {
    topic,
    partition,
    offset,
    key: key === null ? null : Buffer.from(key),
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    headers: {},
    timestamp: 0,
  };
}
