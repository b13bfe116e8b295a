import { mkdirSync, rmSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Logger } from '../../observability/logger.ts';
import type { CommittedBase } from './committed-store.ts';
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
  /** The last write issued; LMDB applies writes in order, so it settles after all before it. */
  #last: Promise<unknown> = Promise.resolve();

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

  /** One store partition, read in place: what a restart uses instead of loading it. */
  base(store: string, partition: number): CommittedBase {
    const data = this.#data;
    return {
      get: (key) => data.get([store, partition, key]),
      *range(from, to) {
        const start: DataKey | MetaKey = from === undefined ? [store, partition] : [store, partition, from];
        const end: DataKey | MetaKey = to === undefined ? [store, partition + 1] : [store, partition, to];
        for (const { key, value } of data.getRange({ start: start as DataKey, end: end as DataKey }))
          yield [key[2], value];
      },
      count: () =>
        data.getKeysCount({
          start: [store, partition] as unknown as DataKey,
          end: [store, partition + 1] as unknown as DataKey,
        }),
    };
  }

  /** Removes a store partition and its checkpoint. */
  wipe(store: string, partition: number): Promise<void> {
    return this.#issue(() => {
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
    return this.#issue(() => {
      for (const c of changes) {
        if (c.value === null) void this.#data.remove([c.store, c.partition, c.key]);
        else void this.#data.put([c.store, c.partition, c.key], c.value);
      }
      for (const c of checkpoints)
        void this.#meta.put([c.store, c.partition], { offset: c.offset, writtenAt: now });
    });
  }

  /** Resolves once every write issued so far is committed (or failed). */
  async settled(): Promise<void> {
    await this.#last;
  }

  #issue(action: () => void): Promise<void> {
    const done = this.#data.transaction(action);
    this.#last = done.catch(() => undefined);
    return done;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.#root.close();
  }
}
