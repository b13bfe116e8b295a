import { z } from 'zod';

/**
 * Column types the monitoring tables use. Only types that Debian's ClickHouse 18.16 and current
 * ClickHouse both accept: no DateTime64 (20.1+), no Bool (21.12+), no LowCardinality. Timestamps are
 * therefore `Int64` milliseconds since the epoch (`toDateTime(intDiv(ts, 1000))` or, on a current
 * server, `fromUnixTimestamp64Milli(ts)` turns them into times); flags are `UInt8` 0/1; ids are
 * `String` (a UUID or a derived id, both fit).
 */
export type ColumnKind =
  | 'String'
  | 'Nullable(String)'
  | 'Int32'
  | 'Int64'
  | 'UInt8'
  | 'UInt32'
  | 'UInt64'
  | 'Float64'
  | 'timestamp'
  | 'flag';

export interface ColumnDef {
  readonly name: string;
  readonly kind: ColumnKind;
}

/** ClickHouse type of a column kind. */
export function clickHouseType(kind: ColumnKind): string {
  switch (kind) {
    case 'timestamp':
      return 'Int64';
    case 'flag':
      return 'UInt8';
    default:
      return kind;
  }
}

/**
 * The identity every monitoring row carries: where the stage read the record the row is about, and
 * the row's index among the rows that record produced. A replayed record yields the same identity, so
 * ReplacingMergeTree collapses the duplicate insert of an at-least-once replay.
 */
export const IDENTITY_COLUMNS: readonly ColumnDef[] = [
  { name: 'src_topic', kind: 'String' },
  { name: 'src_partition', kind: 'Int32' },
  { name: 'src_offset', kind: 'Int64' },
  { name: 'row_index', kind: 'UInt32' },
];

export const IDENTITY_KEY = IDENTITY_COLUMNS.map((c) => c.name);

const c = <N extends string, K extends ColumnKind>(name: N, kind: K): { name: N; kind: K } => ({
  name,
  kind,
});

/**
 * HAMSTRING's monitoring tables (payload columns, identity excluded): the twelve of the Python
 * system, so that its dashboards stay recognisable, plus `worker_batches` (the runtime's batches). Adding a column here adds it to existing
 * tables at the next agent start (`ensureTables`); removing or retyping one needs a manual migration.
 */
export const TABLE_COLUMNS = {
  server_logs: [c('message_id', 'String'), c('timestamp_in', 'timestamp'), c('message_text', 'String')],
  server_logs_timestamps: [
    c('message_id', 'String'),
    c('event', 'String'),
    c('event_timestamp', 'timestamp'),
  ],
  failed_loglines: [
    c('message_text', 'String'),
    c('timestamp_in', 'timestamp'),
    c('timestamp_failed', 'timestamp'),
    c('reason_for_failure', 'Nullable(String)'),
  ],
  loglines: [
    c('logline_id', 'String'),
    c('subnet_id', 'String'),
    c('timestamp', 'timestamp'),
    c('status', 'String'),
    c('client_ip', 'String'),
    c('record_type', 'String'),
    c('additional_fields', 'Nullable(String)'),
  ],
  logline_timestamps: [
    c('logline_id', 'String'),
    c('stage', 'String'),
    c('status', 'String'),
    c('timestamp', 'timestamp'),
    c('is_active', 'flag'),
  ],
  logline_to_batches: [c('logline_id', 'String'), c('batch_id', 'String')],
  batch_timestamps: [
    c('batch_id', 'String'),
    c('stage', 'String'),
    c('instance_name', 'String'),
    c('status', 'String'),
    c('timestamp', 'timestamp'),
    c('is_active', 'flag'),
    c('message_count', 'UInt32'),
  ],
  suspicious_batches_to_batch: [c('suspicious_batch_id', 'String'), c('batch_id', 'String')],
  suspicious_batch_timestamps: [
    c('suspicious_batch_id', 'String'),
    c('client_ip', 'String'),
    c('stage', 'String'),
    c('instance_name', 'String'),
    c('status', 'String'),
    c('timestamp', 'timestamp'),
    c('is_active', 'flag'),
    c('message_count', 'UInt32'),
  ],
  alerts: [
    c('client_ip', 'String'),
    c('alert_timestamp', 'timestamp'),
    c('suspicious_batch_id', 'String'),
    c('overall_score', 'Float64'),
    c('domain_names', 'String'),
    c('result', 'String'),
  ],
  fill_levels: [
    c('timestamp', 'timestamp'),
    c('stage', 'String'),
    c('entry_type', 'String'),
    c('entry_count', 'UInt64'),
  ],
  batch_tree: [
    c('batch_row_id', 'String'),
    c('stage', 'String'),
    c('instance_name', 'String'),
    c('status', 'String'),
    c('timestamp', 'timestamp'),
    c('parent_batch_row_id', 'Nullable(String)'),
    c('batch_id', 'String'),
  ],
  /**
   * The runtime's own per-batch events (not from the Python system): one row per input partition of
   * a batch. `committed` rows ride the batch's transaction (see `withBatchEvents`), so one exists
   * exactly when the batch committed; their identity is (input topic, partition, first offset of the
   * batch there, row_index 0). Events outside a committed transaction (`consumed`, `aborted`,
   * `recovered`, `stale`) use the identity of `BatchEventEmitter` (see src/monitoring/batch-event-emitter.ts).
   */
  worker_batches: [
    c('stage', 'String'),
    c('instance_name', 'String'),
    c('consumer_group', 'String'),
    c('event', 'String'),
    c('epoch', 'Int64'),
    c('topic', 'String'),
    c('partition', 'Int32'),
    c('first_offset', 'Int64'),
    c('last_offset', 'Int64'),
    c('records', 'UInt32'),
    c('batch_partitions', 'UInt32'),
    c('batch_records', 'UInt32'),
    c('outputs', 'UInt32'),
    c('dead_letters', 'UInt32'),
    c('reason', 'Nullable(String)'),
    c('timestamp', 'timestamp'),
  ],
} as const satisfies Record<string, readonly ColumnDef[]>;

export type TableName = keyof typeof TABLE_COLUMNS;
export const TABLE_NAMES = Object.keys(TABLE_COLUMNS) as TableName[];

/** `worker_batches.event` values; also fixes `row_index` of each event type (its position here). */
export const WORKER_BATCH_EVENTS = [
  'committed',
  'consumed',
  'aborted',
  'recovered',
  'stale',
  'dead_lettered',
] as const;
export type WorkerBatchEvent = (typeof WORKER_BATCH_EVENTS)[number];

/** A table: its name and every column, identity first. */
export interface TableDef {
  readonly name: string;
  readonly columns: readonly ColumnDef[];
}

export function tableDef(name: TableName): TableDef {
  return { name, columns: [...IDENTITY_COLUMNS, ...TABLE_COLUMNS[name]] };
}

export const TABLES: readonly TableDef[] = TABLE_NAMES.map(tableDef);

const INT32 = 2 ** 31;

/** Parses an ISO-8601 (or any Date-parsable) string or epoch milliseconds to epoch milliseconds. */
const timestampSchema = z.union([
  z.number().int().nonnegative(),
  z.string().transform((s, ctx) => {
    const ms = Date.parse(s);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: `not a timestamp: ${JSON.stringify(s)}` });
      return z.NEVER;
    }
    return ms;
  }),
]);

function columnSchema(kind: ColumnKind): z.ZodType<unknown> {
  switch (kind) {
    case 'String':
      return z.string();
    case 'Nullable(String)':
      return z
        .string()
        .nullable()
        .optional()
        .transform((v) => v ?? null);
    case 'Int32':
      return z
        .number()
        .int()
        .min(-INT32)
        .max(INT32 - 1);
    case 'Int64':
      return z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
    case 'UInt8':
      return z.number().int().min(0).max(255);
    case 'UInt32':
      return z
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1);
    case 'UInt64':
      return z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
    case 'Float64':
      return z.number();
    case 'timestamp':
      return timestampSchema;
    case 'flag':
      return z.union([z.boolean().transform((b) => (b ? 1 : 0)), z.literal(0), z.literal(1)]);
  }
}

/**
 * The zod schema of a table's rows: every column required (a Nullable column may be omitted or
 * null), no unknown keys (JSONEachRow would reject them, and a typo must not lose data silently).
 * The output is what is inserted: timestamps as epoch ms, flags as 0/1.
 */
export function rowSchema(table: TableDef): z.ZodType<Record<string, unknown>> {
  return z.strictObject(Object.fromEntries(table.columns.map((col) => [col.name, columnSchema(col.kind)])));
}

const schemas = new Map<string, z.ZodType<Record<string, unknown>>>(
  TABLES.map((t) => [t.name, rowSchema(t)]),
);

/** Schema of one of the monitoring tables (cached). */
export function tableRowSchema(name: TableName): z.ZodType<Record<string, unknown>> {
  const s = schemas.get(name);
  if (!s) throw new Error(`unknown monitoring table ${name}`);
  return s;
}

type ColumnsOf<T extends TableName> = (typeof TABLE_COLUMNS)[T][number];
type InputValue<K extends ColumnKind> = K extends 'String'
  ? string
  : K extends 'timestamp'
    ? number | string
    : K extends 'flag'
      ? boolean | 0 | 1
      : number;

/**
 * Row type of a table as a stage writes it (before validation: timestamps may be ISO strings, flags
 * booleans; Nullable columns may be left out).
 */
export type RowInput<T extends TableName> = {
  [C in ColumnsOf<T> as C['kind'] extends 'Nullable(String)' ? never : C['name']]: InputValue<C['kind']>;
} & {
  [C in ColumnsOf<T> as C['kind'] extends 'Nullable(String)' ? C['name'] : never]?: string | null;
};

// ---------------------------------------------------------------------------------------------
// DDL. Valid on ClickHouse 18.16 and current ClickHouse: no `ADD COLUMN IF NOT EXISTS` (19.x+),
// so evolution compares system.columns first.

/** `name` quoted as a ClickHouse identifier. */
export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid ClickHouse identifier: ${name}`);
  return `\`${name}\``;
}

export function qualified(database: string, table: string): string {
  return `${quoteIdent(database)}.${quoteIdent(table)}`;
}

/**
 * Where a replicated table lives in ZooKeeper and under which name this replica registers there
 * (config: clickhouse_server.replication). Both may hold the server's macros (`{shard}`,
 * `{replica}`), which the server substitutes; neither holds a quote or backslash (the config
 * schema refuses them), as they become string literals of the engine.
 */
export interface TableReplication {
  zookeeperPath: string;
  replicaName: string;
}

/**
 * The table engine: ReplacingMergeTree, or on a cluster its replicated form with the table's own
 * ZooKeeper path `<zookeeperPath>/<database>/<table>` (18.16 has no `{database}`/`{table}` macros,
 * and two databases, e.g. two test runs, must not share one table's replication log).
 */
export function tableEngineSql(database: string, table: string, replication?: TableReplication): string {
  if (!replication) return 'ReplacingMergeTree';
  const literal = (s: string): string => {
    if (/['\\]/.test(s)) throw new Error(`ReplicatedMergeTree argument with a quote or backslash: ${s}`);
    return `'${s}'`;
  };
  return `ReplicatedReplacingMergeTree(${literal(`${replication.zookeeperPath}/${database}/${table}`)}, ${literal(replication.replicaName)})`;
}

/**
 * `CREATE TABLE IF NOT EXISTS` with ReplacingMergeTree ordered by the identity: rows with the same
 * identity collapse at merge time, and `FINAL` (or GROUP BY identity) hides duplicates before that.
 * With `replication`, ReplicatedReplacingMergeTree: created on each replica, which then fetch each
 * other's parts; the identity collapses duplicates within a replica just the same.
 */
export function createTableSql(database: string, table: TableDef, replication?: TableReplication): string {
  const cols = table.columns.map((col) => `  ${quoteIdent(col.name)} ${clickHouseType(col.kind)}`);
  return [
    `CREATE TABLE IF NOT EXISTS ${qualified(database, table.name)}`,
    '(',
    cols.join(',\n'),
    ')',
    `ENGINE = ${tableEngineSql(database, table.name, replication)}`,
    `ORDER BY (${IDENTITY_KEY.map(quoteIdent).join(', ')})`,
  ].join('\n');
}

/** The `<table>_dedup` view: the table with duplicates of a replay removed (`FINAL`). */
export function dedupViewName(table: string): string {
  return `${table}_dedup`;
}

/**
 * A plain view re-runs its SELECT on every read, and `*` expands at read time, so columns added
 * later show up without recreating it.
 */
export function createDedupViewSql(database: string, table: TableDef): string {
  return `CREATE VIEW IF NOT EXISTS ${qualified(database, dedupViewName(table.name))} AS SELECT * FROM ${qualified(database, table.name)} FINAL`;
}

export interface ExistingColumn {
  name: string;
  type: string;
}

export interface SchemaDiff {
  /** Columns the schema has and the table lacks: added by ALTER. */
  missing: ColumnDef[];
  /** Columns whose type differs: reported, never altered automatically. */
  mismatched: { name: string; expected: string; actual: string }[];
}

export function diffColumns(table: TableDef, existing: readonly ExistingColumn[]): SchemaDiff {
  const byName = new Map(existing.map((e) => [e.name, e.type]));
  const missing: ColumnDef[] = [];
  const mismatched: SchemaDiff['mismatched'] = [];
  for (const col of table.columns) {
    const actual = byName.get(col.name);
    const expected = clickHouseType(col.kind);
    if (actual === undefined) missing.push(col);
    else if (actual !== expected) mismatched.push({ name: col.name, expected, actual });
  }
  return { missing, mismatched };
}

/** One statement per column: 18.16 has no IF NOT EXISTS here, so callers diff first. */
export function addColumnSql(database: string, table: string, col: ColumnDef): string {
  return `ALTER TABLE ${qualified(database, table)} ADD COLUMN ${quoteIdent(col.name)} ${clickHouseType(col.kind)}`;
}
