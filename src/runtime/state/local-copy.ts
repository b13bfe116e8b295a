import { mkdirSync, rmSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Logger } from '../../observability/logger.ts';
import type { CommittedStore } from './committed-store.ts';
import type { StoreChange } from './state-transaction.ts';

/** Where the local copy of one store partition stands: the changelog position it reflects at least. */
export interface Checkpoint {
  /** Changelog offset from which a restore must read to be complete. */
  offset: number;
  /** Wall-clock time the checkpoint was written (ms since the epoch). */
  writtenAt: number;
}

type DataKey = [string, number, string];
type MetaKey = [string, number];

/**
 * The instance's local copy of its stores in LMDB (one environment per worker instance), so a
 * restart reads only the changelog tail past the checkpoint. It only ever holds committed changes
 * and checkpoints that are lower bounds of where those changes sit in the changelog; replaying the
 * changelog from the checkpoint is therefore always correct (later records overwrite). Writes are
 * asynchronous and applied in order; a checkpoint is written in the same LMDB transaction as, or
 * after, the data it covers.
 */
export class LocalCopy {
  readonly #root: RootDatabase;
  readonly #data: Database<Buffer, DataKey>;
  readonly #meta: Database<Checkpoint, MetaKey>;

  private constructor(root: RootDatabase) {
    this.#root = root;
    this.#data = root.openDB<Buffer, DataKey>({ name: 'data', encoding: 'binary' });
    this.#meta = root.openDB<Checkpoint, MetaKey>({ name: 'meta', encoding: 'json' });
  }

  /**
   * Opens (or creates) the copy in `dir`; one that the library refuses to open (another format
   * version) is deleted and begun anew. LMDB's own syncing is kept: a copy torn by a machine crash
   * would crash the process on open, not fail cleanly, and the syncs run off the event loop.
   */
  static open(dir: string, log: Logger): LocalCopy {
    mkdirSync(dir, { recursive: true });
    const options = { path: dir, maxDbs: 4 };
    try {
      return new LocalCopy(open(options));
    } catch (e) {
      log.warn({ event: 'local-copy-wiped', dir, err: String(e) }, 'state: local copy unreadable; wiped');
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      return new LocalCopy(open(options));
    }
  }

  checkpoint(store: string, partition: number): Checkpoint | undefined {
    return this.#meta.get([store, partition]);
  }

  /**
   * Loads one store partition into `into`, yielding to the event loop now and then so that a large
   * copy does not stall the consumer. Returns what it loaded.
   */
  async load(
    store: string,
    partition: number,
    into: CommittedStore,
  ): Promise<{ records: number; bytes: number }> {
    let records = 0;
    let bytes = 0;
    for (const { key, value } of this.#data.getRange({
      start: [store, partition],
      end: [store, partition + 1],
    })) {
      into.entries.set(key[2], value);
      records += 1;
      bytes += key[2].length + value.length;
      if (records % 50_000 === 0) await new Promise<void>((r) => setImmediate(r));
    }
    into.sorted.reset();
    return { records, bytes };
  }

  /** Removes a store partition and its checkpoint. */
  wipe(store: string, partition: number): Promise<void> {
    return this.#data.transaction(() => {
      for (const key of this.#data.getKeys({ start: [store, partition], end: [store, partition + 1] }))
        void this.#data.remove(key);
      void this.#meta.remove([store, partition]);
    });
  }

  /** Applies committed changes, then moves checkpoints, in one LMDB transaction. */
  write(
    changes: Iterable<StoreChange>,
    checkpoints: Iterable<{ store: string; partition: number; offset: number }>,
    now: number,
  ): Promise<void> {
    return this.#data.transaction(() => {
      for (const c of changes) {
        if (c.value === null) void this.#data.remove([c.store, c.partition, c.key]);
        else void this.#data.put([c.store, c.partition, c.key], c.value);
      }
      for (const c of checkpoints)
        void this.#meta.put([c.store, c.partition], { offset: c.offset, writtenAt: now });
    });
  }

  /** Resolves once every write issued so far is committed. */
  async settled(): Promise<void> {
    await this.#data.committed;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.#root.close();
  }
}
