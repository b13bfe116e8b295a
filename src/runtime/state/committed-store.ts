import { SortedKeys } from './sorted-keys.ts';

/**
 * What one store of one partition holds as of the last committed transaction (or restore): encoded
 * values by key. Values stay encoded so that a stage mutating an object it put cannot change the
 * committed state behind the runtime's back, and so that restore need not decode.
 */
export class CommittedStore {
  readonly entries = new Map<string, Buffer>();
  readonly sorted = new SortedKeys();

  /** A put (value) or a delete (null). */
  apply(key: string, value: Buffer | null): void {
    if (value === null) {
      if (this.entries.delete(key)) this.sorted.removed(key);
      return;
    }
    if (!this.entries.has(key)) this.sorted.added(key);
    this.entries.set(key, value);
  }

  sortedKeys(): readonly string[] {
    return this.sorted.keys(() => this.entries.keys());
  }
}
