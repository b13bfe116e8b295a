import { monitoringRowsOfJson } from './compact-rows.ts';
import { errorText } from '../errors/error-text.ts';
import type { Logger } from '../observability/logger.ts';
import { deadLetterOf } from '../runtime/record-errors/dead-letter.ts';
import type { ProcessResult, Stage, StageContext, StageOutput, StageRecord } from '../runtime/stage.ts';
import { classifyClickHouseError } from './clickhouse-errors.ts';
import {
  clickhouseFailure,
  ClickHouseUnavailable,
  insertSettings,
  type ClickHouseConnection,
} from './clickhouse-connection.ts';
import type { MonitoringMetrics } from './monitoring-metrics.ts';
import { IDENTITY_KEY, qualified, rowSchema, type TableDef } from './tables.ts';

/** Why a monitoring record went to the dead-letter topic (header `hamstring.dlt.error.kind`). */
export type RejectReason = 'unknown-table' | 'bad-json' | 'schema' | 'rejected-by-clickhouse';

export interface DecodedRow {
  record: StageRecord;
  row: Record<string, unknown>;
}

export interface RejectedRecord {
  record: StageRecord;
  reason: RejectReason;
  error: Error;
}

export interface DecodedBatch {
  /** Valid rows per table, in consumption order. */
  byTable: Map<string, DecodedRow[]>;
  rejected: RejectedRecord[];
}

/** Maps consumed topics to tables and validates each record's JSON against its table's schema. */
export class RowDecoder {
  readonly #tables = new Map<string, { table: TableDef; schema: ReturnType<typeof rowSchema> }>();

  constructor(tables: readonly TableDef[], topicPrefix: string) {
    for (const table of tables)
      this.#tables.set(`${topicPrefix}${table.name}`, { table, schema: rowSchema(table) });
  }

  #check(
    entry: { table: TableDef; schema: ReturnType<typeof rowSchema> },
    record: StageRecord,
    json: unknown,
    list: DecodedRow[],
    rejected: RejectedRecord[],
  ): void {
    const parsed = entry.schema.safeParse(json);
    if (parsed.success) {
      list.push({ record, row: parsed.data });
      return;
    }
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(row)'}: ${i.message}`).join('; ');
    rejected.push({ record, reason: 'schema', error: new Error(`${entry.table.name}: ${issues}`) });
  }

  get topics(): string[] {
    return [...this.#tables.keys()];
  }

  decode(records: readonly StageRecord[]): DecodedBatch {
    const byTable = new Map<string, DecodedRow[]>();
    const rejected: RejectedRecord[] = [];
    for (const record of records) {
      const entry = this.#tables.get(record.topic);
      if (!entry) {
        rejected.push({
          record,
          reason: 'unknown-table',
          error: new Error(`no monitoring table for topic ${record.topic}`),
        });
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(record.value?.toString('utf8') ?? '');
      } catch (e) {
        rejected.push({ record, reason: 'bad-json', error: new Error(`not JSON: ${errorText(e)}`) });
        continue;
      }
      const list = byTable.get(entry.table.name) ?? [];
      byTable.set(entry.table.name, list);
      const rows = monitoringRowsOfJson(json);
      // A record of one row stands for itself; a stage's records carry the rows of a whole call, and
      // each of those is checked (and refused) as a row of its own.
      if (rows === undefined || (rows.length === 1 && rows[0] === json)) {
        this.#check(entry, record, json, list, rejected);
        continue;
      }
      for (const element of rows) this.#check(entry, rowRecord(record, element), element, list, rejected);
    }
    for (const [table, list] of byTable) if (list.length === 0) byTable.delete(table);
    return { byTable, rejected };
  }
}

/**
 * The record one row of a batched record stands for: the batched record's position and headers with
 * the row alone as value, so a row ClickHouse refuses is dead-lettered alone, not with its siblings.
 */
function rowRecord(record: StageRecord, element: unknown): StageRecord {
  let value: Buffer | undefined;
  return {
    ...record,
    get value(): Buffer {
      value ??= Buffer.from(JSON.stringify(element) ?? 'null');
      return value;
    },
  };
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * True when ClickHouse refused the data itself (parse, type, size), not the connection or the login:
 * a chunk failing so is retried row by row and only the offending rows are dead-lettered.
 */
export function isDataError(e: unknown): boolean {
  return classifyClickHouseError(e) === 'rejected-row';
}

/** Identity of a row as text, for dedup tokens and logs. */
function identityOf(row: Record<string, unknown>): string {
  return IDENTITY_KEY.map((k) => String(row[k])).join('/');
}

export interface SinkHooks {
  /**
   * Called after each successful insert (one chunk), before the batch's offsets commit; `pending`
   * counts the batch's rows still to insert after it. Tests crash here.
   */
  afterInsert?(info: { table: string; rows: number; pending: number }): Promise<void> | void;
}

export interface ClickHouseSinkOptions {
  name: string;
  groupId: string;
  topicPrefix: string;
  deadLetterTopic: string;
  tables: readonly TableDef[];
  /** Rows per insert: pipeline.monitoring.clickhouse_connector.batch_size. */
  insertBatchSize: number;
  /** The connection in use (the agent replaces it after an outage). */
  connection(): ClickHouseConnection;
  /**
   * An insert failed for a reason other than the data. The agent stops the worker (closing the
   * consumer) and reconnects; `process` meanwhile waits for its batch to be discarded.
   */
  onUnavailable(error: ClickHouseUnavailable): void;
  metrics: MonitoringMetrics;
  log: Logger;
  hooks?: SinkHooks;
  now?: () => number;
}

/**
 * The monitoring agent's stage, for TransactionalWorker in `at-least-once` mode: `process` inserts
 * the batch's rows (side effect), returns dead letters for records that do not fit, and the worker
 * commits the offsets only after it returned. Rows are inserted per table in chunks of
 * `insertBatchSize`; a partial chunk is flushed at the end of the batch, so no row waits longer
 * than one Kafka batch (bounded by kafka_batch.timeout_ms) before it is inserted.
 */
export function clickHouseSinkStage(o: ClickHouseSinkOptions): Stage {
  const decoder = new RowDecoder(o.tables, o.topicPrefix);
  const now = o.now ?? Date.now;

  const deadLetter = (r: RejectedRecord): StageOutput => {
    o.metrics.deadLetters.inc({ reason: r.reason });
    const at = now();
    return deadLetterOf(r.record, o.deadLetterTopic, {
      group: o.groupId,
      stage: o.name,
      errorKind: r.reason,
      error: r.error,
      attempts: 1,
      firstFailure: at,
      lastFailure: at,
    });
  };

  const insert = async (table: string, rows: DecodedRow[]): Promise<void> => {
    const conn = o.connection();
    const values = rows.map((r) => r.row);
    const first = values[0];
    const last = values[values.length - 1];
    const settings =
      first && last
        ? insertSettings(
            conn.target,
            conn.version,
            () => `${table}:${identityOf(first)}:${identityOf(last)}:${values.length}`,
          )
        : undefined;
    const t0 = now();
    await conn.client.insert({
      table: qualified(conn.target.database, table),
      values,
      format: 'JSONEachRow',
      ...(settings ? { clickhouse_settings: settings } : {}),
    });
    o.metrics.insertSeconds.observe((now() - t0) / 1000);
    o.metrics.rowsInserted.inc({ table }, values.length);
  };

  /** Inserts a chunk; on a data error, row by row. Returns the rows ClickHouse refused. */
  const insertChunk = async (table: string, rows: DecodedRow[]): Promise<RejectedRecord[]> => {
    try {
      await insert(table, rows);
      return [];
    } catch (e) {
      if (!isDataError(e) || rows.length === 1) {
        if (isDataError(e)) return rows.map(({ record }) => refused(record, e));
        throw unavailable(table, e);
      }
    }
    const refusedRows: RejectedRecord[] = [];
    for (const row of rows) {
      try {
        await insert(table, [row]);
      } catch (e) {
        if (!isDataError(e)) throw unavailable(table, e);
        refusedRows.push(refused(row.record, e));
      }
    }
    return refusedRows;
  };

  return {
    name: o.name,
    shortName: 'monitoring',
    inputTopics: decoder.topics,
    outputTopics: [o.deadLetterTopic],
    async process(records: readonly StageRecord[], ctx: StageContext): Promise<ProcessResult> {
      const { byTable, rejected } = decoder.decode(records);
      const outputs = rejected.map(deadLetter);
      let pending = 0;
      for (const rows of byTable.values()) pending += rows.length;
      try {
        for (const [table, rows] of byTable) {
          for (const chunk of chunks(rows, o.insertBatchSize)) {
            // Stale (rebalance, stop): the worker discards whatever this returns.
            if (ctx.signal.aborted) return { outputs: [] };
            const refusedRows = await insertChunk(table, chunk);
            outputs.push(...refusedRows.map(deadLetter));
            pending -= chunk.length;
            await o.hooks?.afterInsert?.({ table, rows: chunk.length - refusedRows.length, pending });
          }
        }
      } catch (e) {
        if (!(e instanceof ClickHouseUnavailable)) throw e;
        o.log.warn(
          { event: 'clickhouse-insert-failed', cause: e.kind, err: errorText(e) },
          'clickhouse: insert failed; the batch is discarded and replayed after reconnecting',
        );
        o.onUnavailable(e);
        // The agent now stops the worker: its signal fires and the batch is discarded uncommitted.
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        throw e;
      }
      return { outputs };
    },
  };
}

function refused(record: StageRecord, e: unknown): RejectedRecord {
  return {
    record,
    reason: 'rejected-by-clickhouse',
    error: e instanceof Error ? e : new Error(String(e)),
  };
}

function unavailable(table: string, e: unknown): ClickHouseUnavailable {
  return clickhouseFailure(`insert into ${table} failed`, e);
}
