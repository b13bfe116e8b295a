import type { KeyValueStore } from '../../runtime/index.ts';
import { stableId } from '../ids.ts';
import type { LinePosition } from '../line-frames.ts';
import { encodeBatchText, isoFromMicros } from '../messages.ts';
import {
  contextOfEntry,
  linesOfEntry,
  sumCost,
  textCost,
  type ContextLine,
  type ContextEntry,
  type LinesEntry,
  type StoredLine,
} from './stored-lines.ts';

/** The collector's one store: open batches, their lines and each subnet's previous batch. */
export const BATCH_STORE = 'batches';

/** The stage that makes batches, as the monitoring rows name it (the Python batch handler). */
export const BATCH_HANDLER_STAGE = 'log_collection.batch_handler';

export interface BatchBufferSettings {
  readonly batchSize: number;
  readonly timeoutMs: number;
  /** A subnet quiet for longer than this starts its next batch without context. */
  readonly contextTtlMs: number;
  /** Most bytes of an encoded batch, context included (`max_batch_bytes`). */
  readonly maxBatchBytes: number;
}

/**
 * Bytes of an encoded batch besides its lines: the ids, the two timestamps and the field names,
 * rounded up (about 240 bytes for four-digit years).
 */
export const BATCH_ENVELOPE_BYTES = 512;

/**
 * Bytes a batch's own lines may take: half of what the envelope leaves. The other half is the next
 * batch's, where these lines travel again as its context; so a batch's context always fits whole.
 */
export function lineBudget(settings: Pick<BatchBufferSettings, 'maxBatchBytes'>): number {
  return Math.floor((settings.maxBatchBytes - BATCH_ENVELOPE_BYTES) / 2);
}

interface OpenBatch {
  readonly openedAt: number;
  readonly count: number;
  readonly next: number;
  readonly lastSource: LinePosition;
  /** Sum of the lines' {@link textCost}; absent in open batches stored before batches had a bound. */
  readonly bytes?: number;
}

/** A batch leaving the collector and what its monitoring rows need. */
export interface SentBatch {
  /** The encoded Batch. */
  readonly value: string;
  readonly batchId: string;
  readonly batchTreeRowId: string;
  readonly subnet: string;
  /** Lines in the batch, context included. */
  readonly size: number;
  /** The lines new in this batch (not context), in arrival order. */
  readonly lines: readonly StoredLine[];
  /** The position of the batch's last line: the source of the batch's monitoring rows. */
  readonly lastSource: LinePosition;
}

// Key layout (one store, ordered keys): `o/<subnet>` open batch, `l/<subnet>/<seq>` its lines from
// line number <seq> on, `c/<subnet>` the lines of the subnet's previous batch, `t/<subnet>` when that
// one was sent. The lines one call adds to a subnet are written as one entry at `flush`, so a call of
// a thousand lines writes a changelog record per subnet, not per line, and no batch is written whole
// again. Subnet ids contain no `/`, so `l/<subnet>/` prefixes never overlap.
//
// The byte bound: a batch's own lines take at most `lineBudget`, half of `max_batch_bytes` less the
// envelope, and leave with the batch that way (a line that would overflow sends the open batch first,
// like `batch_size`). The previous batch, as context, takes the other half, so it always fits whole
// and the inspector keeps the Python system's continuous series. Only context stored under a larger
// bound (or before the bound) can exceed its half: it is cut to fit, oldest lines first, because the
// newest lines are the ones adjacent to the batch. An open batch stored before the bound is measured
// at the first call that touches it and, when over, sent in consecutive parts that each fit.
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

  /**
   * Adds a line to its subnet's open batch; returns the batches that left: the open one when the
   * line would push it over the byte bound (sent before the line joins), then the line's own batch
   * when the line filled it. `cost` is the line's {@link textCost}, at most {@link lineBudget}.
   */
  add(subnet: string, line: ContextLine, at: LinePosition, now: number, cost = textCost(line)): SentBatch[] {
    // The position alone: a whole input record passed here would be stored with its value (a Buffer
    // as JSON, four bytes and more per byte) in every line entry and open batch.
    const { topic, partition, offset } = at;
    const source: LinePosition =
      at.line === undefined ? { topic, partition, offset } : { topic, partition, offset, line: at.line };
    const sent: SentBatch[] = [];
    let open = this.#openBatch(subnet);
    if (open && open.bytes + cost > this.#budget) {
      sent.push(...this.send(subnet, open, now));
      open = undefined;
    }
    const seq = open?.next ?? 0;
    const pending = this.#pending.get(subnet) ?? { seq, lines: [] };
    pending.lines.push({ json: line.json, id: line.id, micros: line.micros, source });
    this.#pending.set(subnet, pending);
    const updated = {
      openedAt: open?.openedAt ?? now,
      count: (open?.count ?? 0) + 1,
      next: seq + 1,
      lastSource: source,
      bytes: (open?.bytes ?? 0) + cost,
    };
    if (updated.count >= this.settings.batchSize) sent.push(...this.send(subnet, updated, now));
    else this.#open.set(subnet, updated);
    return sent;
  }

  get #budget(): number {
    return lineBudget(this.settings);
  }

  /** The subnet's open batch with its size (an open batch stored without one is measured once). */
  #openBatch(subnet: string): (OpenBatch & { bytes: number }) | undefined {
    const open = this.#open.get(subnet) ?? (this.store.get(openKey(subnet)) as OpenBatch | undefined);
    if (!open) return undefined;
    // Never changed in place (an add makes a new one), so it is returned as it is, uncopied.
    if (open.bytes !== undefined) return open as OpenBatch & { bytes: number };
    const measured = { ...open, bytes: sumCost(this.#lines(subnet, false)) };
    this.#open.set(subnet, measured);
    return measured;
  }

  /** The subnet's open lines in arrival order: stored, then added this call; `take` removes them. */
  #lines(subnet: string, take: boolean): StoredLine[] {
    const prefix = linePrefix(subnet);
    const lines: StoredLine[] = [];
    for (const [key, value] of [...this.store.range({ from: prefix, to: `${prefix}${END}` })]) {
      if (take) this.store.delete(key);
      lines.push(...linesOfEntry(value));
    }
    lines.push(...(this.#pending.get(subnet)?.lines ?? []));
    if (take) this.#pending.delete(subnet);
    return lines;
  }

  /** Writes the lines and open batches this call changed. */
  flush(): void {
    for (const [subnet, pending] of this.#pending) {
      const entry: LinesEntry = { v: 2, lines: pending.lines };
      this.store.put(`${linePrefix(subnet)}${String(pending.seq).padStart(12, '0')}`, entry);
    }
    for (const [subnet, open] of this.#open) this.store.put(openKey(subnet), open);
    this.#pending.clear();
    this.#open.clear();
  }

  /** Sends every batch open for `timeoutMs` or longer. */
  due(now: number): SentBatch[] {
    this.flush();
    const sent: SentBatch[] = [];
    for (const [key, value] of [...this.store.range({ from: 'o/', to: `o/${END}` })]) {
      const subnet = key.slice(2);
      const stored = value as OpenBatch;
      if (now - stored.openedAt >= this.settings.timeoutMs) sent.push(...this.send(subnet, stored, now));
      else if (stored.bytes === undefined) {
        // Stored before the bound: an oversized one leaves now, in parts, rather than at its timeout.
        const open = this.#openBatch(subnet)!;
        if (open.bytes > this.#budget) sent.push(...this.send(subnet, open, now));
      }
    }
    this.flush();
    return sent;
  }

  /** Forgets the context of subnets that sent no batch for longer than `contextTtlMs`. */
  forgetStaleContext(now: number): void {
    for (const [key, sentAt] of [...this.store.range({ from: 't/', to: `t/${END}` })]) {
      if (now - (sentAt as number) < this.settings.contextTtlMs) continue;
      const subnet = key.slice(2);
      this.store.delete(key);
      this.store.delete(contextKey(subnet));
    }
  }

  /** The collector's fill level: lines waiting in open batches, and how many batches are open. */
  fill(): { lines: number; batches: number } {
    this.flush();
    let lines = 0;
    let batches = 0;
    for (const [, value] of this.store.range({ from: 'o/', to: `o/${END}` })) {
      lines += (value as OpenBatch).count;
      batches += 1;
    }
    return { lines, batches };
  }

  /**
   * Sends the subnet's open batch: one batch, or consecutive parts when it exceeds the bounds (only
   * an open batch stored before the byte bound, or under a larger one, can). Each part carries the
   * one before it as context, as if they had left one by one.
   */
  private send(subnet: string, open: OpenBatch, now: number): SentBatch[] {
    const lines = this.#lines(subnet, true);
    this.#open.delete(subnet);
    this.store.delete(openKey(subnet));
    const parts =
      open.bytes !== undefined && open.bytes <= this.#budget && lines.length <= this.settings.batchSize
        ? [{ lines, bytes: open.bytes }]
        : splitLines(lines, this.#budget, this.settings.batchSize);
    let context = this.#context(subnet);
    const sent: SentBatch[] = [];
    for (const part of parts) {
      const room = this.settings.maxBatchBytes - BATCH_ENVELOPE_BYTES - part.bytes;
      sent.push(makeBatch(subnet, part.lines, fitContext(context, room)));
      context = {
        lines: part.lines.map(({ json, id, micros }) => ({ json, id, micros })),
        bytes: part.bytes,
      };
    }
    const entry: ContextEntry = { v: 2, lines: context.lines, bytes: context.bytes };
    this.store.put(contextKey(subnet), entry);
    this.store.put(sentKey(subnet), now);
    return sent;
  }

  #context(subnet: string): { lines: readonly ContextLine[]; bytes: number } {
    return contextOfEntry(this.store.get(contextKey(subnet)));
  }
}

/** Consecutive parts of `lines`, each within `budget` bytes and `batchSize` lines. */
function splitLines(
  lines: readonly StoredLine[],
  budget: number,
  batchSize: number,
): { lines: StoredLine[]; bytes: number }[] {
  const parts: { lines: StoredLine[]; bytes: number }[] = [];
  let part: { lines: StoredLine[]; bytes: number } = { lines: [], bytes: 0 };
  for (const stored of lines) {
    const cost = textCost(stored);
    // A line alone over the budget (possible only in a store written without a bound) goes alone.
    if (part.lines.length > 0 && (part.bytes + cost > budget || part.lines.length >= batchSize)) {
      parts.push(part);
      part = { lines: [], bytes: 0 };
    }
    part.lines.push(stored);
    part.bytes += cost;
  }
  if (part.lines.length > 0) parts.push(part);
  return parts;
}

/** The newest lines of `context` whose cost fits `room`: the oldest go first. */
function fitContext(
  context: { lines: readonly ContextLine[]; bytes: number },
  room: number,
): readonly ContextLine[] {
  if (context.bytes <= room) return context.lines;
  let bytes = context.bytes;
  let first = 0;
  while (first < context.lines.length && bytes > room) bytes -= textCost(context.lines[first++]!);
  return context.lines.slice(first);
}

function makeBatch(subnet: string, lines: readonly StoredLine[], context: readonly ContextLine[]): SentBatch {
  const batchId = stableId('batch', ...lines.map((line) => line.id));
  const batchTreeRowId = stableId('batch_tree', batchId, BATCH_HANDLER_STAGE);
  const data = sortLines([...context, ...lines]);
  const value = encodeBatchText({
    batch_tree_row_id: batchTreeRowId,
    batch_id: batchId,
    begin_timestamp: isoFromMicros(data[0]!.micros),
    end_timestamp: isoFromMicros(data[data.length - 1]!.micros),
    data: data.map((line) => line.json),
    ...(context.length > 0 ? { context_logline_ids: context.map((line) => line.id) } : {}),
  });
  return {
    value,
    batchId,
    batchTreeRowId,
    subnet,
    size: data.length,
    lines,
    lastSource: lines[lines.length - 1]!.source,
  };
}

/**
 * Sorted by `ts`, then `logline_id`: a total order, so every replay sorts alike. `ts` is the ISO text
 * of `micros` (the collector writes it so), which is why the batch's begin and end come from them.
 */
function sortLines<T extends ContextLine>(lines: readonly T[]): T[] {
  return [...lines].sort((a, b) => a.micros - b.micros || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
