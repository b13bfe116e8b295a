import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { AdminPort } from '../../kafka/admin.ts';
import { openChangelogReader, type ChangelogReader } from '../../kafka/changelog-reader.ts';
import { tpKey, type OutgoingRecord } from '../../kafka/records.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../clock.ts';
import type { Stage } from '../stage.ts';
import { ensureChangelogs, type ChangelogTopicSettings } from './changelog-topics.ts';
import { jsonCodec } from './codecs.ts';
import type { CommittedStore } from './committed-store.ts';
import type { Codec, PartitionState } from './contract.ts';
import { LocalCopy } from './local-copy.ts';
import { RestoreTasks } from './restore-tasks.ts';
import { StateMetrics } from './state-metrics.ts';
import { StateTransaction } from './state-transaction.ts';
import { TimerSchedule } from './timer-schedule.ts';
import { partitionState } from './transaction-stores.ts';

/** Where and how a worker keeps its stores (from `runtime.state` in config.yaml). */
export interface StateSettings extends ChangelogTopicSettings {
  /** Root of the local copies; each worker instance uses `<dir>/<group>/<instance>`. */
  dir: string;
}

export interface StateEngineOptions {
  stage: Pick<Stage, 'name' | 'inputTopics' | 'stores' | 'timer'>;
  groupId: string;
  instanceId: string;
  bootstrapServers: string;
  settings: StateSettings;
  apiTimeoutMs: number;
  clock: Clock;
  log: Logger;
  registry: Registry;
  /** Opens the reader a restore uses (tests wrap it). */
  openReader?: (clientId: string) => Promise<ChangelogReader>;
}

/**
 * Committed changes reach the local copy at most this late (or sooner past LOCAL_FLUSH_CHANGES):
 * a key updated by every batch is written once per flush, not once per commit. A crash loses at
 * most this much of the copy, which the changelog tail then replays.
 */
const LOCAL_FLUSH_MS = 1_000;
const LOCAL_FLUSH_CHANGES = 100_000;

interface PendingWrite {
  store: string;
  partition: number;
  changes: Map<string, Buffer | null>;
}

/**
 * A worker's state stores and timers, behind the narrow interface its loop calls: assign/drop on
 * rebalance, begin a transaction per batch or timer call, the changelog records to produce in it,
 * committed/aborted afterwards, close at shutdown. Partitions are input partition numbers.
 */
export class StateEngine {
  readonly metrics: StateMetrics;
  readonly timers: TimerSchedule | undefined;
  readonly #o: StateEngineOptions;
  readonly #codecs: Map<string, Codec<unknown>>;
  #changelogs = new Map<string, string>();
  #local: LocalCopy | undefined;
  readonly #ready = new Map<number, Map<string, CommittedStore>>();
  readonly #restores: RestoreTasks;
  /** Last checkpoint written per store partition (`store\0partition`). */
  readonly #positions = new Map<string, number>();

  readonly #open: StateTransaction[] = [];
  #nextId = 1;
  #closed = false;
  /** Set after a failed local write: later checkpoints could cover the changes it lost. */
  #localFailed = false;
  /** Committed changes and checkpoints not yet written to the local copy; written together. */
  #pending = new Map<string, PendingWrite>();
  #pendingCheckpoints = new Map<string, { store: string; partition: number; offset: number }>();
  #pendingChanges = 0;
  #flushTimer: NodeJS.Timeout | undefined;

  /** True for a stage that declares stores or a timer. */
  static needed(stage: Pick<Stage, 'stores' | 'timer'>): boolean {
    return Object.keys(stage.stores ?? {}).length > 0 || stage.timer !== undefined;
  }

  constructor(o: StateEngineOptions) {
    this.#o = o;
    this.#codecs = new Map(
      Object.entries(o.stage.stores ?? {}).map(([name, d]) => [name, d.codec ?? jsonCodec]),
    );
    this.metrics = new StateMetrics(o.registry);
    this.timers = o.stage.timer ? new TimerSchedule(o.stage.timer.intervalMs) : undefined;
    this.#restores = new RestoreTasks({
      clientPrefix: `${o.stage.name}-${o.instanceId}`,
      changelogs: () => this.#changelogs,
      local: () => this.#local!,
      openReader:
        o.openReader ??
        ((clientId) =>
          openChangelogReader({ bootstrapServers: o.bootstrapServers, clientId, timeoutMs: o.apiTimeoutMs })),
      metrics: this.metrics,
      clock: o.clock,
      log: o.log,
    });
  }

  /** Changelog topic per store. */
  get changelogs(): ReadonlyMap<string, string> {
    return this.#changelogs;
  }

  /**
   * Creates missing changelogs, checks partition counts (throws StateConfigurationError naming the
   * topics) and opens the local copy. Called once at start, before the consumer joins.
   */
  async prepare(admin: AdminPort): Promise<void> {
    if (this.#codecs.size === 0) return;
    const { topics } = await ensureChangelogs({
      admin,
      stage: this.#o.stage.name,
      groupId: this.#o.groupId,
      stores: [...this.#codecs.keys()],
      inputTopics: this.#o.stage.inputTopics,
      settings: this.#o.settings,
      timeoutMs: this.#o.apiTimeoutMs,
    });
    this.#changelogs = topics;
    this.#local ??= LocalCopy.open(
      join(this.#o.settings.dir, safeName(this.#o.groupId), safeName(this.#o.instanceId)),
      this.#o.log,
    );
  }

  /**
   * Starts restoring newly assigned partitions; they are ready (and their timers scheduled) once
   * restored. Partitions already ready or restoring are left alone. `onReady` runs once per restore.
   */
  assign(partitions: readonly number[], onReady?: (partitions: number[]) => void): void {
    const fresh = [...new Set(partitions)].filter((p) => !this.#ready.has(p) && !this.#restores.has(p));
    if (fresh.length === 0) return;
    if (this.#codecs.size === 0) {
      for (const p of fresh) this.#makeReady(p, new Map());
      onReady?.(fresh);
      return;
    }
    this.#restores.start(fresh, (restored, live) => {
      for (const pos of restored.positions) this.#positions.set(posKey(pos.store, pos.partition), pos.offset);
      for (const p of live) this.#makeReady(p, restored.stores.get(p)!);
      if (live.length > 0) onReady?.(live);
    });
  }

  /** Forgets revoked or lost partitions: their restore stops, their stores and timers go. */
  drop(partitions: readonly number[]): void {
    // Their committed changes go to the copy with their checkpoints: a later restore reads less.
    this.#flush();
    this.#restores.cancel(partitions);
    for (const p of partitions) {
      this.#ready.delete(p);
      this.timers?.stop(p);
      for (const s of this.#codecs.keys()) this.#positions.delete(posKey(s, p));
    }
    for (const t of this.#open) t.forget(partitions);
  }

  isReady(partition: number): boolean {
    return this.#ready.has(partition);
  }

  /** Assigned partitions whose stores are still being restored (keep them paused). */
  restoring(): number[] {
    return this.#restores.partitions();
  }

  /** Resolves when every restore started so far has ended (tests, benchmarks). */
  async restored(): Promise<void> {
    await this.#restores.settled();
  }

  /**
   * A new transaction. It reads through the transactions still open before it (a batch processed
   * while the previous one commits); abort one and those after it are aborted too.
   */
  begin(): StateTransaction {
    const parent = this.#open.at(-1);
    const txn = new StateTransaction(this.#nextId++, (store, p) => this.#committed(store, p), parent);
    this.#open.push(txn);
    return txn;
  }

  /** What `ctx.state(partition)` returns inside `txn`. Throws for a partition not ready. */
  partitionState(txn: StateTransaction, partition: number): PartitionState {
    if (this.#codecs.size === 0) throw new Error(`stage ${this.#o.stage.name} declares no state stores`);
    if (!this.#ready.has(partition))
      throw new Error(
        `partition ${partition} of stage ${this.#o.stage.name} is not assigned or still restoring`,
      );
    return partitionState(txn, partition, this.#codecs);
  }

  /** The changelog records of `txn`: the last write per key, a tombstone for a delete. */
  changelogRecords(txn: StateTransaction): OutgoingRecord[] {
    const out: OutgoingRecord[] = [];
    for (const c of txn.changes()) {
      out.push({ topic: this.#changelogs.get(c.store)!, partition: c.partition, key: c.key, value: c.value });
    }
    return out;
  }

  /**
   * `txn` committed in Kafka: its changes enter the committed view and the local copy, and the
   * checkpoints move to what the producer's delivery reports prove is in the changelog.
   */
  committed(txn: StateTransaction, delivered: ReadonlyMap<string, number>): void {
    const i = this.#open.indexOf(txn);
    if (i !== 0) throw new Error(`state transaction ${txn.id} committed out of order`);
    txn.markCommitted();
    this.#open.shift();
    if (this.#open[0]) this.#open[0].parent = undefined;
    const changes = [...txn.changes()].filter((c) => this.#ready.has(c.partition));
    for (const c of changes) this.#ready.get(c.partition)!.get(c.store)!.apply(c.key, c.value);
    if (!this.#local || this.#localFailed) return;
    for (const c of changes) {
      const k = posKey(c.store, c.partition);
      let w = this.#pending.get(k);
      if (!w) {
        w = { store: c.store, partition: c.partition, changes: new Map() };
        this.#pending.set(k, w);
      }
      w.changes.set(c.key, c.value);
    }
    this.#pendingChanges += changes.length;
    for (const c of this.#advance(txn.partitions(), delivered))
      this.#pendingCheckpoints.set(posKey(c.store, c.partition), c);
    if (this.#pendingChanges >= LOCAL_FLUSH_CHANGES) this.#flush();
    else if (!this.#flushTimer && (this.#pending.size > 0 || this.#pendingCheckpoints.size > 0)) {
      this.#flushTimer = setTimeout(() => this.#flush(), LOCAL_FLUSH_MS);
      this.#flushTimer.unref();
    }
  }

  /** Writes the pending changes and checkpoints in one LMDB transaction. */
  #flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (!this.#local || this.#localFailed) return;
    if (this.#pending.size === 0 && this.#pendingCheckpoints.size === 0) return;
    const pending = [...this.#pending.values()];
    const checkpoints = [...this.#pendingCheckpoints.values()];
    this.#pending = new Map();
    this.#pendingCheckpoints = new Map();
    this.#pendingChanges = 0;
    const changes = function* () {
      for (const w of pending)
        for (const [key, value] of w.changes) yield { store: w.store, partition: w.partition, key, value };
    };
    this.#local
      .write(changes(), checkpoints, this.#o.clock.now())
      .then(() => {
        // The copy shows these now; memory keeps only what changed since.
        for (const w of pending) {
          const store = this.#ready.get(w.partition)?.get(w.store);
          if (store) for (const [key, value] of w.changes) store.written(key, value);
        }
      })
      .catch((e: unknown) => this.#writeFailed(e));
  }

  /**
   * The commit of `txn` failed without a known outcome: it may be in the changelog. Its changes are
   * dropped like an abort's and so are the stores of its partitions, which must be restored anew
   * (the changelog then tells). Returns those partitions.
   */
  uncertain(txn: StateTransaction): number[] {
    const partitions = txn.partitions().filter((p) => this.#ready.has(p));
    this.aborted(txn);
    this.drop(partitions);
    return partitions;
  }

  /** `txn` was aborted (or its batch went stale): it and every transaction after it are forgotten. */
  aborted(txn: StateTransaction): void {
    const i = this.#open.indexOf(txn);
    if (i < 0) return;
    for (const t of this.#open.splice(i)) t.markAborted();
  }

  /** Ready partitions whose timer is due. */
  dueTimers(now: number): number[] {
    return this.timers?.due(now).filter((p) => this.#ready.has(p)) ?? [];
  }

  /**
   * Writes the last checkpoints and closes the local copy; restores still running are cancelled.
   * For a clean stop: called with no transaction open, before the member leaves the group, once the
   * producer's delivery reports are in (`delivered`), so the next start reads no tail at all.
   */
  async close(delivered?: ReadonlyMap<string, number>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#restores.close();
    this.#flush();
    if (!this.#local) return;
    if (delivered && !this.#localFailed) {
      const checkpoints = this.#advance([...this.#ready.keys()], delivered);
      if (checkpoints.length > 0)
        await this.#local
          .write([], checkpoints, this.#o.clock.now())
          .catch((e: unknown) => this.#writeFailed(e));
    }
    await this.#local.close();
    this.#local = undefined;
  }

  #advance(partitions: number[], delivered: ReadonlyMap<string, number>) {
    const out: { store: string; partition: number; offset: number }[] = [];
    for (const p of partitions) {
      if (!this.#ready.has(p)) continue;
      for (const [store, topic] of this.#changelogs) {
        const last = delivered.get(tpKey({ topic, partition: p }));
        const k = posKey(store, p);
        if (last === undefined || last + 1 <= (this.#positions.get(k) ?? -1)) continue;
        this.#positions.set(k, last + 1);
        out.push({ store, partition: p, offset: last + 1 });
      }
    }
    return out;
  }

  #makeReady(partition: number, stores: Map<string, CommittedStore>): void {
    this.#ready.set(partition, stores);
    this.timers?.start(partition, this.#o.clock.now());
  }

  #committed(store: string, partition: number): CommittedStore {
    const s = this.#ready.get(partition)?.get(store);
    if (!s) throw new Error(`store ${store} of partition ${partition} is not assigned or still restoring`);
    return s;
  }

  #writeFailed(e: unknown): void {
    // A failed LMDB transaction wrote neither its changes nor its checkpoint, so the copy is still
    // consistent with an older checkpoint, as long as nothing is written after it.
    this.#localFailed = true;
    this.#o.log.warn({ event: 'local-copy-write-failed', err: String(e) }, 'state: local copy write failed');
  }
}

const posKey = (store: string, partition: number) => `${store}\u0000${partition}`;

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}
