/**
 * Reads what a pipeline run left for the line accounting: every pipeline topic of the config's
 * layout and the `clickhouse_<table>` topics the fates rest on, each partition with read_committed
 * to its high watermark (the changelog reader of src/kafka: assigned, no group, no commits), and the
 * checked monitoring tables as the dashboard reads them (`<table>_dedup`).
 */
import { bootstrapServers, type HamstringConfig } from '../../config/index.ts';
import { createAdmin } from '../../kafka/admin.ts';
import { openChangelogReader, type ChangelogRange } from '../../kafka/changelog-reader.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { ClickHouseConnection } from '../../monitoring/clickhouse-connection.ts';
import { clickhouseTargetFromConfig } from '../../monitoring/clickhouse-target.ts';
import { monitoringTopic } from '../../monitoring/events.ts';
import { dedupViewName, qualified, quoteIdent, type TableName } from '../../monitoring/tables.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';
import { layoutTopics, pipelineLayout } from './layout.ts';
import { CHECKED_COLUMNS } from './monitoring-check.ts';
import {
  decodeRecord,
  monitoringRowsOf,
  type AlertRecord,
  type BatchRecord,
  type LineRecord,
  type MonitoringRow,
  type MonitoringRows,
  type PipelineRead,
  type RecordKind,
  type Undecodable,
} from './records.ts';

/** The monitoring topics whose committed rows decide fates: rejections, filtering and the verdicts. */
const FATE_TABLES = ['failed_loglines', 'logline_timestamps'] as const satisfies readonly TableName[];

/**
 * The columns of the fate rows that the accounting (ledger.ts) and the hostile report read; the
 * rest is dropped as the rows arrive. A million-line run commits several timestamp rows per line and
 * stage: whole rows outgrew a 4 GB heap. Of the repeated values (`SHARED`) one string is kept.
 */
const FATE_COLUMNS: Readonly<Record<(typeof FATE_TABLES)[number], readonly string[]>> = {
  failed_loglines: [
    'src_topic',
    'src_partition',
    'src_offset',
    'row_index',
    'message_text',
    'reason_for_failure',
  ],
  logline_timestamps: ['src_topic', 'src_partition', 'src_offset', 'logline_id', 'stage', 'status'],
};
const SHARED = new Set(['src_topic', 'stage', 'status']);

/** Returns one instance of each value it is given: records and rows come by the million, these values by the dozen. */
function interner<T>(): (v: T) => T {
  const seen = new Map<T, T>();
  return (v) => {
    const known = seen.get(v);
    if (known !== undefined) return known;
    seen.set(v, v);
    return v;
  };
}

/** A topic did not reach its end in time, or a monitoring record was not rows: the read cannot be judged. */
export class PipelineReadError extends HamstringError {
  override readonly name = 'PipelineReadError';
  readonly code = 'VERIFY_PIPELINE_READ';
}

export interface ReadPipelineOptions {
  readonly config: HamstringConfig;
  /** Database of the run's monitoring tables; default the configured one. */
  readonly database?: string;
  /** False: ClickHouse is not read (the accounting then says the monitoring was not checked). */
  readonly clickhouse?: boolean;
  /** Default `clickhouse_`. */
  readonly monitoringTopicPrefix?: string;
  /**
   * How long the Kafka read may go without a record before it gives up (a partition ending in an
   * open transaction never reaches its end). Default 120 s. A stall, not a total: a million-line
   * run's topics take minutes to read and are never stuck.
   */
  readonly stallMs?: number;
  readonly clientId?: string;
}

export async function readPipeline(o: ReadPipelineOptions): Promise<PipelineRead> {
  const layout = pipelineLayout(o.config);
  const topics = layoutTopics(layout);
  const kinds = new Map<string, RecordKind | 'rows'>();
  for (const kind of ['lines', 'batches', 'alerts', 'outgoing'] as const)
    for (const topic of topics[kind]) kinds.set(topic, kind);
  for (const table of FATE_TABLES) kinds.set(monitoringTopic(table, o.monitoringTopicPrefix), 'rows');
  const rowTables = new Map(FATE_TABLES.map((t) => [monitoringTopic(t, o.monitoringTopicPrefix), t]));

  const into = {
    lines: [] as LineRecord[],
    batches: [] as BatchRecord[],
    alerts: [] as AlertRecord[],
    undecodable: [] as Undecodable[],
  };
  const committed = new Map<TableName, MonitoringRow[]>(FATE_TABLES.map((t) => [t, []]));
  const shared = interner<unknown>();
  const slim = (table: (typeof FATE_TABLES)[number], row: MonitoringRow): MonitoringRow => {
    const kept: Record<string, unknown> = {};
    for (const column of FATE_COLUMNS[table])
      kept[column] = SHARED.has(column) ? shared(row[column]) : row[column];
    return kept;
  };
  await readTopics(o, [...kinds.keys()], (r) => {
    const kind = kinds.get(r.topic);
    const table = rowTables.get(r.topic);
    if (kind === 'rows' && table !== undefined) {
      const rows = monitoringRowsOf(r.value);
      const kept = committed.get(table);
      if (rows) for (const row of rows) kept?.push(slim(table, row));
      else into.undecodable.push({ ...r, error: 'not monitoring rows' });
    } else if (kind !== undefined && kind !== 'rows') decodeRecord(kind, r, r.value, into);
  });
  return {
    layout,
    records: into,
    committedRows: Object.fromEntries(committed),
    clickhouseRows: o.clickhouse === false ? undefined : await readMonitoring(o),
  };
}

/** Reads every partition of `topics` from its start to its high watermark, read_committed. */
export async function readTopics(
  o: Pick<ReadPipelineOptions, 'config' | 'clientId' | 'stallMs'>,
  topics: readonly string[],
  onRecord: (r: FetchedRecord) => void,
): Promise<void> {
  const bootstrap = bootstrapServers(o.config);
  const clientId = o.clientId ?? 'hamstring-verify-pipeline';
  const stallMs = o.stallMs ?? 120_000;
  const admin = createAdmin(bootstrap, `${clientId}-admin`);
  const ranges: ChangelogRange[] = [];
  try {
    const existing = await admin.partitionCounts(topics);
    for (const topic of topics) {
      // A topic nobody created (no alerter writes Kafka, say) holds nothing to account for.
      if (!existing.has(topic)) continue;
      for (const w of await admin.watermarks(topic))
        ranges.push({ topic, partition: w.partition, from: w.low, until: w.high });
    }
  } finally {
    admin.close();
  }
  const reader = await openChangelogReader({ bootstrapServers: bootstrap, clientId, timeoutMs: 30_000 });
  const last = new Map<string, number>();
  const topicOf = interner<string>();
  const stalled = new AbortController();
  let progressAt = Date.now();
  const watch = setInterval(() => {
    if (Date.now() - progressAt > stallMs) stalled.abort(new DOMException('stalled', 'TimeoutError'));
  }, 1_000);
  try {
    await reader.read(
      ranges,
      (records) => {
        progressAt = Date.now();
        for (const r of records) {
          last.set(`${r.topic}[${r.partition}]`, r.offset);
          // One string per topic, not one per record: the records' positions are kept by the million.
          onRecord({ ...r, topic: topicOf(r.topic) });
        }
      },
      stalled.signal,
    );
  } catch (e) {
    if (e instanceof Error && e.name === 'TimeoutError') {
      const short = ranges
        .filter((r) => (last.get(`${r.topic}[${r.partition}]`) ?? r.from - 1) < r.until - 2)
        .map(
          (r) =>
            `${r.topic}[${r.partition}] read to ${last.get(`${r.topic}[${r.partition}]`) ?? 'nothing'} of ${r.from}..${r.until}`,
        );
      throw new PipelineReadError(
        `the pipeline topics did not reach their high watermarks: no record for ${stallMs} ms (a transaction still open?): ${short.join(', ') || 'each within a commit marker of its end'}`,
        { cause: e },
      );
    }
    throw e;
  } finally {
    clearInterval(watch);
    await reader.close();
  }
}

/** The checked tables' rows as the dashboard reads them: the `_dedup` views (FINAL). */
async function readMonitoring(o: ReadPipelineOptions): Promise<MonitoringRows> {
  const target = clickhouseTargetFromConfig(
    o.config,
    o.database === undefined ? {} : { database: o.database },
  );
  const connection = await ClickHouseConnection.open(target);
  try {
    const rows: MonitoringRows = {};
    for (const [table, columns] of Object.entries(CHECKED_COLUMNS) as [TableName, readonly string[]][]) {
      const view = qualified(target.database, dedupViewName(table));
      rows[table] = await connection.query<MonitoringRow>(
        `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${view}`,
      );
    }
    return rows;
  } finally {
    await connection.close();
  }
}
