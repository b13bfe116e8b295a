import type { ChangelogRange, ChangelogReader } from '../../kafka/changelog-reader.ts';
import { tpKey } from '../../kafka/records.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../clock.ts';
import { CommittedStore } from './committed-store.ts';
import type { LocalCopy } from './local-copy.ts';
import { planRestore } from './restore-plan.ts';
import type { StateMetrics } from './state-metrics.ts';
import type { StoreChange } from './state-transaction.ts';

/** The restored stores of some partitions and the changelog position each reflects. */
export interface Restored {
  stores: Map<number, Map<string, CommittedStore>>;
  positions: { store: string; partition: number; offset: number }[];
}

const PROGRESS_EVERY_MS = 5_000;

/**
 * Restores the stores of `partitions`: the local copy where its checkpoint is trusted, then the
 * changelog from there to its end with read_committed. What the changelog adds is written to the
 * local copy too, and the checkpoint moved to the end once all of it is written.
 */
export async function restorePartitions(args: {
  partitions: readonly number[];
  changelogs: ReadonlyMap<string, string>;
  local: LocalCopy;
  reader: ChangelogReader;
  metrics: StateMetrics;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
}): Promise<Restored> {
  const { local, reader, metrics, clock, log } = args;
  const t0 = clock.now();
  const storeOf = new Map([...args.changelogs].map(([store, topic]) => [topic, store] as const));
  const stores = new Map<number, Map<string, CommittedStore>>();
  for (const p of args.partitions) stores.set(p, new Map());
  const wanted = [...args.changelogs].flatMap(([store, topic]) =>
    args.partitions.map((partition) => ({ store, topic, partition })),
  );
  // Writes still in flight for these partitions (a drop flushes) would change the copy under us.
  await local.settled();
  const marks = await reader.watermarks(wanted.map(({ topic, partition }) => ({ topic, partition })));
  const ranges: ChangelogRange[] = [];
  for (const [i, w] of wanted.entries()) {
    const mark = marks[i]!;
    const plan = planRestore(local.checkpoint(w.store, w.partition), mark, clock.now());
    if (plan.kind === 'full') {
      if (plan.reason !== 'no-checkpoint') {
        metrics.wiped.inc({ store: w.store, reason: plan.reason });
        log.warn(
          {
            event: 'local-copy-wiped',
            store: w.store,
            partition: w.partition,
            reason: plan.reason,
            changelog: mark,
          },
          'state: local copy not trusted; restoring the store partition in full',
        );
      }
      await local.wipe(w.store, w.partition);
    }
    // The copy is read in place, not loaded: what it holds counts as restored from it.
    const store = new CommittedStore(local.base(w.store, w.partition));
    stores.get(w.partition)!.set(w.store, store);
    if (plan.kind === 'tail') metrics.restoredRecords.inc({ store: w.store, source: 'local' }, store.size);
    ranges.push({ topic: w.topic, partition: w.partition, from: plan.from, until: mark.high });
  }
  let records = 0;
  let bytes = 0;
  let lastProgress = t0;
  const writes: Promise<void>[] = [];
  const reached = await reader.read(
    ranges,
    (batch) => {
      const changes: StoreChange[] = [];
      const chunkBytes = new Map<string, number>();
      const chunkRecords = new Map<string, number>();
      for (const r of batch) {
        const store = storeOf.get(r.topic);
        const target = store === undefined ? undefined : stores.get(r.partition)?.get(store);
        if (store === undefined || !target || r.key === null) continue;
        const key = r.key.toString('utf8');
        target.restore(key, r.value);
        changes.push({ store, partition: r.partition, key, value: r.value });
        const size = r.key.length + (r.value?.length ?? 0);
        bytes += size;
        chunkBytes.set(store, (chunkBytes.get(store) ?? 0) + size);
        chunkRecords.set(store, (chunkRecords.get(store) ?? 0) + 1);
      }
      // Once per chunk and store: a labelled inc per record costs more than the restore itself.
      for (const [store, n] of chunkRecords) {
        metrics.restoredRecords.inc({ store, source: 'changelog' }, n);
        metrics.restoredBytes.inc({ store, source: 'changelog' }, chunkBytes.get(store));
      }
      records += changes.length;
      // Once in the copy, a change need not stay in memory (unless changed again since).
      writes.push(
        local.write(changes, [], clock.now()).then(() => {
          for (const c of changes) stores.get(c.partition)?.get(c.store)?.written(c.key, c.value);
        }),
      );
      const now = clock.now();
      if (now - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = now;
        log.info(
          { event: 'restore-progress', partitions: args.partitions, records, bytes },
          'state: restoring from the changelog',
        );
      }
    },
    args.signal,
  );
  const positions = wanted.map((w) => ({
    store: w.store,
    partition: w.partition,
    offset:
      reached.get(tpKey(w)) ?? ranges.find((r) => r.topic === w.topic && r.partition === w.partition)!.from,
  }));
  await Promise.all(writes);
  for (const byStore of stores.values()) for (const s of byStore.values()) s.recount();
  await local.write([], positions, clock.now());
  const seconds = (clock.now() - t0) / 1000;
  metrics.restoreSeconds.observe(seconds);
  log.info(
    { event: 'restored', partitions: args.partitions, records, bytes, seconds, positions },
    'state: partitions restored',
  );
  return { stores, positions };
}
