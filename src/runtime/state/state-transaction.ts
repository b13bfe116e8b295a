import type { CommittedStore } from './committed-store.ts';

/** One change a transaction made: a put (bytes) or a delete (null), last write per key wins. */
export interface StoreChange {
  store: string;
  partition: number;
  key: string;
  value: Buffer | null;
}

/** Where a transaction finds what it did not write itself. */
export type CommittedLookup = (store: string, partition: number) => CommittedStore;

interface Slot {
  store: string;
  partition: number;
  changes: Map<string, Buffer | null>;
  /** Keys present minus keys absent, relative to what the transaction reads through. */
  sizeDelta: number;
}

interface Undo {
  slot: Slot;
  key: string;
  /** The transaction's own entry before the write; undefined when it had none. */
  prev: Buffer | null | undefined;
  sizeEffect: number;
}

const slotKey = (store: string, partition: number) => `${partition}\u0000${store}`;

/**
 * The store changes of one Kafka transaction, over however many batches (or timer calls) it spans.
 * Reads see the transaction's own writes, then those of the open transaction it follows (when the
 * next batch is processed while the previous one commits), then the committed view. Nothing here
 * touches the committed view: committing applies the changes, aborting just forgets them.
 *
 * Savepoints undo the writes of one `process` call whose result is thrown away (a record error, a
 * bisection step, a rerun on fewer records), so the transaction holds exactly the changes of the
 * records it commits.
 */
export class StateTransaction {
  #state: 'open' | 'committed' | 'aborted' = 'open';
  readonly #slots = new Map<string, Slot>();
  readonly #undo: Undo[] = [];

  constructor(
    readonly id: number,
    readonly committed: CommittedLookup,
    /** The open transaction this one reads through; cleared when that one commits. */
    public parent: StateTransaction | undefined,
  ) {}

  get state(): 'open' | 'committed' | 'aborted' {
    return this.#state;
  }

  /** The bytes under `key`; undefined when absent (deleted or never written). */
  read(store: string, partition: number, key: string): Buffer | undefined {
    const own = this.#slots.get(slotKey(store, partition))?.changes.get(key);
    if (own !== undefined) return own ?? undefined;
    if (this.parent) return this.parent.read(store, partition, key);
    return this.committed(store, partition).get(key);
  }

  write(store: string, partition: number, key: string, value: Buffer | null): void {
    this.#assertOpen();
    const slot = this.#slot(store, partition);
    const before = this.read(store, partition, key) !== undefined;
    const after = value !== null;
    const sizeEffect = Number(after) - Number(before);
    this.#undo.push({ slot, key, prev: slot.changes.get(key), sizeEffect });
    slot.changes.set(key, value);
    slot.sizeDelta += sizeEffect;
  }

  size(store: string, partition: number): number {
    const own = this.#slots.get(slotKey(store, partition))?.sizeDelta ?? 0;
    const base = this.parent ? this.parent.size(store, partition) : this.committed(store, partition).size;
    return base + own;
  }

  /**
   * Present keys in [from, to) in ascending order, with their bytes, as of each step: a key the
   * stage deletes while iterating is not visited after.
   */
  *range(store: string, partition: number, from?: string, to?: string): IterableIterator<[string, Buffer]> {
    const inBounds = (k: string) => (from === undefined || k >= from) && (to === undefined || k < to);
    const mine = new Set<string>();
    for (const t of this.#chain()) {
      for (const k of t.#slots.get(slotKey(store, partition))?.changes.keys() ?? [])
        if (inBounds(k)) mine.add(k);
    }
    const extra = [...mine].sort();
    const base = this.committed(store, partition).range(from, to)[Symbol.iterator]();
    let b = base.next();
    let j = 0;
    while (!b.done || j < extra.length) {
      let key: string;
      if (!b.done && mine.has(b.value[0])) {
        b = base.next();
        continue;
      }
      if (!b.done && (j >= extra.length || b.value[0] < extra[j]!)) {
        key = b.value[0];
        b = base.next();
      } else {
        key = extra[j++]!;
      }
      const value = this.read(store, partition, key);
      if (value !== undefined) yield [key, value];
    }
  }

  /** This transaction and the open ones it reads through, newest first. */
  *#chain(): IterableIterator<StateTransaction> {
    yield this;
    if (this.parent) yield* this.parent.#chain();
  }

  /** A mark to roll back to. */
  savepoint(): number {
    return this.#undo.length;
  }

  /** Undoes every write made since the savepoint. */
  rollbackTo(savepoint: number): void {
    while (this.#undo.length > savepoint) {
      const u = this.#undo.pop()!;
      if (u.prev === undefined) u.slot.changes.delete(u.key);
      else u.slot.changes.set(u.key, u.prev);
      u.slot.sizeDelta -= u.sizeEffect;
    }
  }

  /** Partitions this transaction changed. */
  partitions(): number[] {
    return [...new Set([...this.#slots.values()].filter((s) => s.changes.size > 0).map((s) => s.partition))];
  }

  /** The last write per key, per store and partition. */
  *changes(partition?: number): IterableIterator<StoreChange> {
    for (const s of this.#slots.values()) {
      if (partition !== undefined && s.partition !== partition) continue;
      for (const [key, value] of s.changes) yield { store: s.store, partition: s.partition, key, value };
    }
  }

  get changeCount(): number {
    let n = 0;
    for (const s of this.#slots.values()) n += s.changes.size;
    return n;
  }

  /**
   * Drops the changes of partitions that are gone (revoked, lost) from an open transaction. Their
   * undo entries stay, pointing at the detached slots, so savepoints taken before keep their meaning.
   */
  forget(partitions: Iterable<number>): void {
    const gone = new Set(partitions);
    for (const [k, s] of this.#slots) if (gone.has(s.partition)) this.#slots.delete(k);
  }

  markCommitted(): void {
    this.#assertOpen();
    this.#state = 'committed';
  }

  markAborted(): void {
    this.#state = 'aborted';
  }

  #slot(store: string, partition: number): Slot {
    const k = slotKey(store, partition);
    let s = this.#slots.get(k);
    if (!s) {
      s = { store, partition, changes: new Map(), sizeDelta: 0 };
      this.#slots.set(k, s);
    }
    return s;
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw new Error(`state transaction ${this.id} is ${this.#state}`);
  }
}
