import type { KeyValueStore, RecordPosition } from '../../runtime/index.ts';
import { stableId } from '../ids.ts';
import { timestampMicros, type Batch, type LogLine } from '../messages.ts';

/** The collector's one store: open batches, their lines and each subnet's previous batch. */
export const BATCH_STORE = 'batches';

/** The stage that makes batches, as the monitoring rows name it (the Python batch handler). */
export const BATCH_HANDLER_STAGE = 'log_collection.batch_handler';

export interface BatchBufferSettings {
  readonly batchSize: number;
  readonly timeoutMs: number;
  /** A subnet quiet for longer than this starts its next batch without context. */
  readonly contextTtlMs: number;
}

export interface StoredLine {
  readonly line: LogLine;
  readonly source: RecordPosition;
}

interface OpenBatch {
  readonly openedAt: number;
  readonly count: number;
  readonly next: number;
  readonly lastSource: RecordPosition;
}

/** A batch leaving the collector and what its monitoring rows need. */
export interface SentBatch {
  readonly batch: Batch;
  /** The lines new in this batch (not context), in arrival order. */
  readonly lines: readonly StoredLine[];
  /** The position of the batch's last line: the source of the batch's monitoring rows. */
  readonly lastSource: RecordPosition;
}

// Key layout (one store, ordered keys): `o/<subnet>` open batch, `l/<subnet>/<seq>` its lines from
// line number <seq> on, `c/<subnet>` the lines of the subnet's previous batch, `t/<subnet>` when that
// one was sent. The lines one call adds to a subnet are written as one entry at `flush`, so a call of
// a thousand lines writes a changelog record per subnet, not per line, and no batch is written whole
// again. Subnet ids contain no `/`, so `l/<subnet>/` prefixes never overlap.
const END = '\uffff';
const openKey = (subnet: string) => `o/${subnet}`;
const linePrefix = (subnet: string) => `l/${subnet}/`;
const contextKey = (subnet: string) => `c/${subnet}`;
const sentKey = (subnet: string) => `t/${subnet}`;

/** Lines added during this call and not yet written, per subnet. */
interface Pending {
  readonly seq: number;
  readonly lines: StoredLine[];
}

/**
 * Per-subnet batching over one partition's store. Everything it decides derives from the store and
 * the arguments, so a call replayed after an aborted transaction (store rolled back) decides the same.
 * Use one instance per call and partition, and call {@link flush} before the call returns.
 */
export class BatchBuffer {
  readonly #pending = new Map<string, Pending>();
  readonly #open = new Map<string, OpenBatch>();

  constructor(
    private readonly store: KeyValueStore<unknown>,
    private readonly settings: BatchBufferSettings,
  ) {}

  /** Adds a line to its subnet's open batch; returns the batch when the line filled it. */
  add(line: LogLine, source: RecordPosition, now: number): SentBatch | undefined {
    const subnet = line.subnet_id;
    const open = this.#open.get(subnet) ?? (this.store.get(openKey(subnet)) as OpenBatch | undefined);
    const seq = open?.next ?? 0;
    const pending = this.#pending.get(subnet) ?? { seq, lines: [] };
    pending.lines.push({ line, source });
    this.#pending.set(subnet, pending);
    const updated: OpenBatch = {
      openedAt: open?.openedAt ?? now,
      count: (open?.count ?? 0) + 1,
      next: seq + 1,
      lastSource: source,
    };
    if (updated.count >= this.settings.batchSize) return this.send(subnet, updated, now);
    this.#open.set(subnet, updated);
    return undefined;
  }

  /** Writes the lines and open batches this call changed. */
  flush(): void {
    for (const [subnet, pending] of this.#pending)
      this.store.put(`${linePrefix(subnet)}${String(pending.seq).padStart(12, '0')}`, pending.lines);
    for (const [subnet, open] of this.#open) this.store.put(openKey(subnet), open);
    this.#pending.clear();
    this.#open.clear();
  }

  /** Sends every batch open for `timeoutMs` or longer and forgets context older than its TTL. */
  due(now: number): SentBatch[] {
    this.flush();
    const sent: SentBatch[] = [];
    for (const [key, value] of [...this.store.range({ from: 'o/', to: `o/${END}` })]) {
      const open = value as OpenBatch;
      if (now - open.openedAt >= this.settings.timeoutMs) sent.push(this.send(key.slice(2), open, now));
    }
    for (const [key, sentAt] of [...this.store.range({ from: 't/', to: `t/${END}` })]) {
      if (now - (sentAt as number) < this.settings.contextTtlMs) continue;
      const subnet = key.slice(2);
      this.store.delete(key);
      this.store.delete(contextKey(subnet));
    }
    return sent;
  }

  /** Lines waiting in open batches (the collector's fill level). */
  bufferedLines(): number {
    this.flush();
    let total = 0;
    for (const [, value] of this.store.range({ from: 'o/', to: `o/${END}` }))
      total += (value as OpenBatch).count;
    return total;
  }

  private send(subnet: string, open: OpenBatch, now: number): SentBatch {
    const prefix = linePrefix(subnet);
    const lines: StoredLine[] = [];
    for (const [key, value] of [...this.store.range({ from: prefix, to: `${prefix}${END}` })]) {
      this.store.delete(key);
      // One line per entry is how stores written before entries held a call's lines look.
      if (Array.isArray(value)) lines.push(...(value as StoredLine[]));
      else lines.push(value as StoredLine);
    }
    lines.push(...(this.#pending.get(subnet)?.lines ?? []));
    this.#pending.delete(subnet);
    this.#open.delete(subnet);
    this.store.delete(openKey(subnet));
    const context = (this.store.get(contextKey(subnet)) as LogLine[] | undefined) ?? [];
    const fresh = lines.map((stored) => stored.line);
    this.store.put(contextKey(subnet), fresh);
    this.store.put(sentKey(subnet), now);

    const batchId = stableId('batch', ...fresh.map((line) => line.logline_id));
    const data = sortLines([...context, ...fresh]);
    const batch: Batch = {
      batch_tree_row_id: stableId('batch_tree', batchId, BATCH_HANDLER_STAGE),
      batch_id: batchId,
      begin_timestamp: data[0]!.ts,
      end_timestamp: data[data.length - 1]!.ts,
      data,
      ...(context.length > 0 ? { context_logline_ids: context.map((line) => line.logline_id) } : {}),
    };
    return { batch, lines, lastSource: open.lastSource };
  }
}

/** Sorted by `ts`, then `logline_id`; each timestamp parsed once. */
export function sortLines(lines: readonly LogLine[]): LogLine[] {
  return lines
    .map((line) => ({ line, micros: timestampMicros(line.ts) }))
    .sort(
      (a, b) =>
        a.micros - b.micros ||
        (a.line.logline_id < b.line.logline_id ? -1 : a.line.logline_id > b.line.logline_id ? 1 : 0),
    )
    .map((entry) => entry.line);
}
