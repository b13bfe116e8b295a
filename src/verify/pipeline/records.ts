/**
 * What the line accounting reads, decoded: the records of every pipeline topic (with their
 * positions) and monitoring rows, from the `clickhouse_<table>` topics or from ClickHouse. Pure
 * types and decoders; read-pipeline.ts fills them, line-fates.ts judges them.
 */
import { monitoringRowsOfJson } from '../../monitoring/compact-rows.ts';
import { decodeOutgoingAlert } from '../../stages/alerter/index.ts';
import { ownLines } from '../../stages/detector/index.ts';
import { decodeAlert, decodeBatch, type Alert, type Batch } from '../../stages/index.ts';
import { linesOf } from '../../stages/line-frames.ts';
import type { TableName } from '../../monitoring/tables.ts';
import type { PipelineLayout } from './layout.ts';
import { lineIdOf } from './line-marks.ts';

export interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/**
 * A raw line (logserver input, collector input) and its mark, if found: a record's only line, or
 * the line at `index` of a frame the logserver wrote.
 */
export interface LineRecord extends Position {
  readonly index?: number;
  readonly line: number | undefined;
}

/**
 * What the accounting needs of a batch: its id and the logline ids of its own lines (context lines
 * carried over from the subnet's previous batch left out). No more: a million-line run reads each
 * line in six batch topics, and whole decoded batches outgrew a 4 GB heap.
 */
export interface BatchIds {
  readonly batch_id: string;
  readonly ownLineIds: readonly string[];
}

/** {@link BatchIds} of a decoded batch. */
export function batchIds(batch: Batch): BatchIds {
  return { batch_id: batch.batch_id, ownLineIds: ownLines(batch).map((l) => l.logline_id) };
}

export interface BatchRecord extends Position {
  readonly batch: BatchIds;
}

/** An alert on a detector's alerter topic, or an outgoing one (with its `alert_id`) on the external topic. */
export interface AlertRecord extends Position {
  readonly alert: Alert;
  readonly alertId?: string;
}

/** A record of a pipeline topic that does not decode as what its topic carries. */
export interface Undecodable extends Position {
  readonly error: string;
}

export interface PipelineRecords {
  readonly lines: readonly LineRecord[];
  readonly batches: readonly BatchRecord[];
  readonly alerts: readonly AlertRecord[];
  readonly undecodable: readonly Undecodable[];
}

/** A monitoring row: its identity columns (`src_topic`, `src_partition`, `src_offset`, `row_index`) and payload. */
export type MonitoringRow = Readonly<Record<string, unknown>>;

/** Rows per table; a table left out was not read. */
export type MonitoringRows = Partial<Record<TableName, readonly MonitoringRow[]>>;

/** What one pipeline read gives the accounting. */
export interface PipelineRead {
  /** The topics the records were read from (and what each carries). */
  readonly layout: PipelineLayout;
  readonly records: PipelineRecords;
  /** Rows of the `clickhouse_<table>` topics (what the stages committed) that fates rest on. */
  readonly committedRows: MonitoringRows;
  /** Rows as the dashboard sees them (the `_dedup` views); undefined: ClickHouse was not read. */
  readonly clickhouseRows: MonitoringRows | undefined;
}

export type RecordKind = 'lines' | 'batches' | 'alerts' | 'outgoing';

/** Sorts one fetched record into `into` by what its topic carries. */
export function decodeRecord(
  kind: RecordKind,
  position: Position & { readonly headers?: Readonly<Record<string, Buffer>> },
  value: Buffer | null,
  into: { lines: LineRecord[]; batches: BatchRecord[]; alerts: AlertRecord[]; undecodable: Undecodable[] },
): void {
  const at = { topic: position.topic, partition: position.partition, offset: position.offset };
  try {
    switch (kind) {
      case 'lines': {
        if (value === null) {
          into.lines.push({ ...at, line: undefined });
          return;
        }
        const { lines, framed } = linesOf({ value, headers: position.headers ?? {} });
        for (let index = 0; index < lines.length; index++)
          into.lines.push({ ...at, ...(framed ? { index } : {}), line: lineIdOf(lines[index]!) });
        return;
      }
      case 'batches':
        into.batches.push({ ...at, batch: batchIds(decodeBatch(value)) });
        return;
      case 'alerts':
        into.alerts.push({ ...at, alert: decodeAlert(value) });
        return;
      case 'outgoing': {
        const { alert_id: alertId, ...alert } = decodeOutgoingAlert(value);
        into.alerts.push({ ...at, alert, alertId });
        return;
      }
    }
  } catch (e) {
    into.undecodable.push({ ...at, error: e instanceof Error ? e.message : String(e) });
  }
}

/**
 * The rows of one monitoring record: one row, a JSON array of rows, or the compact form expanded
 * (the agent reads all three).
 * Returns undefined when the value is not that.
 */
export function monitoringRowsOf(value: Buffer | null): MonitoringRow[] | undefined {
  if (value === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  const rows = monitoringRowsOfJson(parsed);
  return rows?.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r))
    ? (rows as MonitoringRow[])
    : undefined;
}

/** `src_topic@src_partition:src_offset` of a row: the record it is about. */
export function rowSource(row: MonitoringRow): string {
  return positionKey({
    topic: String(row.src_topic),
    partition: Number(row.src_partition),
    offset: Number(row.src_offset),
  });
}

/**
 * The key of a raw line's position, and of the `failed_loglines` row about it: a frame's line is
 * its record's position and its index there, which its rows take as their `row_index`; a record's
 * only line has index 0 and its row index 0.
 */
export function lineKey(p: Position & { readonly index?: number }): string {
  return `${positionKey(p)}/${p.index ?? 0}`;
}

/** {@link lineKey} of the line a `failed_loglines` row is about. */
export function rowLineKey(row: MonitoringRow): string {
  return `${rowSource(row)}/${Number(row.row_index ?? 0)}`;
}

export function positionKey(p: Position): string {
  return `${p.topic}@${p.partition}:${p.offset}`;
}
