/**
 * The monitoring side of the line accounting: the rows the dashboard reads (the `_dedup` views,
 * FINAL) must show each line's and each batch's rows once. ReplacingMergeTree collapses rows of one
 * identity (source position and row index), so a row visible twice has two identities: a stage wrote
 * it about two records (a line forwarded twice, a batch inspected twice). A row missing is one the
 * stages committed (or had to write, by the line's fate) that ClickHouse does not show. Pure.
 *
 * Checked, and why these: every row that is about one line or one batch and written once by design.
 * Not checked: `batch_tree` and `suspicious_batches_to_batch` (lineage of the batches whose
 * `batch_timestamps` rows are checked), `fill_levels` (timer samples, about no line),
 * `worker_batches` (the runtime's events, most of them outside any transaction) and the detector's
 * later `detected` rows for lines of an alert raised by a later batch (a second row by design).
 */
import type { TableName } from '../../monitoring/tables.ts';
import { DETECTOR_STAGE } from '../../stages/detector/index.ts';
import {
  BATCH_HANDLER_STAGE,
  COLLECTOR_STAGE,
  INSPECTOR_STAGE,
  PREFILTER_STAGE,
  type Alert,
} from '../../stages/index.ts';
import { inspectorTimerTopic, type CollectorLedger, type Ledger, type PathLedger } from './ledger.ts';
import { rowLineKey, rowSource, type MonitoringRow, type MonitoringRows } from './records.ts';

const IDENTITY = ['src_topic', 'src_partition', 'src_offset', 'row_index'];

/** The tables the check reads and the columns it needs of each (identity first). */
export const CHECKED_COLUMNS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  server_logs: IDENTITY,
  server_logs_timestamps: IDENTITY,
  failed_loglines: IDENTITY,
  loglines: [...IDENTITY, 'logline_id'],
  logline_to_batches: [...IDENTITY, 'logline_id', 'batch_id'],
  logline_timestamps: [...IDENTITY, 'logline_id', 'stage', 'status'],
  batch_timestamps: [...IDENTITY, 'batch_id', 'stage', 'status', 'instance_name'],
  suspicious_batch_timestamps: [...IDENTITY, 'suspicious_batch_id', 'stage', 'status', 'instance_name'],
  alerts: [...IDENTITY, 'client_ip', 'suspicious_batch_id', 'result'],
};

/** A row missing or visible twice: its table and what it is about (`<expectation>: <line or batch>`). */
export interface MonitoringFinding {
  readonly table: TableName;
  readonly id: string;
}

/** Rows of `table` that `keyOf` names (undefined: not this expectation's row) must exist once per `expected` key. */
interface Expectation {
  readonly table: TableName;
  readonly what: string;
  readonly expected: Iterable<string | number>;
  readonly keyOf: (row: MonitoringRow) => string | number | undefined;
}

export function checkMonitoring(
  ledger: Ledger,
  rows: MonitoringRows,
): { missing: MonitoringFinding[]; twice: MonitoringFinding[] } {
  const expectations = new Map<string, Expectation>();
  const add = (e: Expectation) => expectations.set(`${e.table}\u0000${e.what}`, e);
  const received = [...ledger.received.keys()];
  for (const table of ['server_logs', 'server_logs_timestamps'] as const)
    add({ table, what: 'line in', expected: received, keyOf: (row) => ledger.inputAt.get(rowSource(row)) });
  for (const collector of ledger.collectors)
    collectorExpectations(
      collector,
      ledger.paths.find((p) => p.collector === collector),
    ).forEach(add);
  for (const path of ledger.paths) pathExpectations(path).forEach(add);
  const missing: MonitoringFinding[] = [];
  const twice: MonitoringFinding[] = [];
  for (const e of expectations.values()) {
    const table = rows[e.table];
    if (table === undefined) continue;
    const counts = new Map<string | number, number>();
    for (const row of table) {
      const key = e.keyOf(row);
      if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const key of new Set(e.expected))
      if (!counts.has(key)) missing.push({ table: e.table, id: `${e.what}: ${key}` });
    for (const [key, n] of counts) if (n > 1) twice.push({ table: e.table, id: `${e.what}: ${key}` });
  }
  return { missing, twice };
}

/** `firstPath`: any path of the collector; every prefilter of a collector gets the same batches. */
function collectorExpectations(c: CollectorLedger, firstPath: PathLedger | undefined): Expectation[] {
  const name = c.layout.name;
  const rejected = [...c.rejected.keys()];
  const accepted = [...c.forwarded.keys()].filter((id) => !c.rejected.has(id));
  // failed_loglines rows name no line but their source record; the others name the logline_id,
  // so a row copied under another identity still counts for its line.
  const lineAt = (row: MonitoringRow) => c.lineAt.get(rowLineKey(row));
  const lineOf = (row: MonitoringRow) => c.lineOf.get(String(row.logline_id));
  const stamped = (stage: string, status: string) => (row: MonitoringRow) =>
    row.stage === stage && row.status === status ? lineOf(row) : undefined;
  return [
    { table: 'failed_loglines', what: `rejected by ${name}`, expected: rejected, keyOf: lineAt },
    { table: 'loglines', what: `accepted by ${name}`, expected: accepted, keyOf: lineOf },
    { table: 'logline_to_batches', what: `batched by ${name}`, expected: accepted, keyOf: lineOf },
    {
      table: 'logline_timestamps',
      what: `in_process at ${name}`,
      expected: accepted,
      keyOf: stamped(COLLECTOR_STAGE, 'in_process'),
    },
    {
      table: 'logline_timestamps',
      what: `batched at ${name}`,
      expected: accepted,
      keyOf: stamped(BATCH_HANDLER_STAGE, 'batched'),
    },
    {
      table: 'batch_timestamps',
      what: `batch completed by ${name}`,
      expected: firstPath?.batches.collected.map((r) => r.batch.batch_id) ?? [],
      keyOf: (row) =>
        row.stage === BATCH_HANDLER_STAGE && row.status === 'completed' && row.instance_name === name
          ? String(row.batch_id)
          : undefined,
    },
  ];
}

function pathExpectations(p: PathLedger): Expectation[] {
  const { layout } = p;
  const lineOf = (row: MonitoringRow) => p.collector.lineOf.get(String(row.logline_id));
  const from = (topics: readonly string[]) => (row: MonitoringRow) => topics.includes(String(row.src_topic));
  const lineRows =
    (stage: string, status: string, topics: readonly string[]) =>
    (row: MonitoringRow): number | undefined =>
      row.stage === stage && row.status === status && from(topics)(row) ? lineOf(row) : undefined;
  const batchRows =
    (
      stage: string,
      status: string | undefined,
      accept: (row: MonitoringRow) => boolean,
      column = 'batch_id',
    ) =>
    (row: MonitoringRow): string | undefined =>
      row.stage === stage && (status === undefined || row.status === status) && accept(row)
        ? String(row[column])
        : undefined;
  const suspicious = p.batches.suspicious.map((r) => r.batch.batch_id);
  return [
    {
      table: 'logline_timestamps',
      what: `filtered out by ${layout.prefilter}`,
      expected: p.filtered.keys(),
      keyOf: lineRows(PREFILTER_STAGE, 'filtered_out', [layout.prefilterInput]),
    },
    {
      table: 'logline_timestamps',
      what: `judged normal by ${layout.inspector}`,
      expected: p.normal.keys(),
      keyOf: lineRows(INSPECTOR_STAGE, 'finished', [
        layout.inspectorInput,
        inspectorTimerTopic(layout.inspector),
      ]),
    },
    {
      table: 'logline_timestamps',
      what: `scored by ${layout.detector}`,
      expected: p.scored,
      // Only the row of the suspicious batch that holds the line as its own: a later batch whose
      // alert carries the line writes it a second, `detected` row by design.
      keyOf: (row) => {
        if (row.stage !== DETECTOR_STAGE || row.src_topic !== layout.detectorInput) return undefined;
        const id = lineOf(row);
        return id !== undefined && p.suspicious.get(id)?.includes(rowSource(row)) ? id : undefined;
      },
    },
    {
      table: 'batch_timestamps',
      what: `batch in ${layout.prefilter}`,
      expected: p.batches.collected.map((r) => r.batch.batch_id),
      keyOf: batchRows(PREFILTER_STAGE, 'in_process', from([layout.prefilterInput])),
    },
    {
      table: 'batch_timestamps',
      what: `batch inspected by ${layout.inspector}`,
      expected: p.batches.passed.map((r) => r.batch.batch_id),
      keyOf: batchRows(INSPECTOR_STAGE, 'in_process', from([layout.inspectorInput])),
    },
    {
      table: 'suspicious_batch_timestamps',
      what: `suspicious batch of ${layout.inspector}`,
      expected: suspicious,
      keyOf: batchRows(
        INSPECTOR_STAGE,
        'in_process',
        (row) => row.instance_name === layout.inspector,
        'suspicious_batch_id',
      ),
    },
    {
      table: 'suspicious_batch_timestamps',
      what: `suspicious batch scored by ${layout.detector}`,
      expected: suspicious,
      keyOf: batchRows(DETECTOR_STAGE, undefined, from([layout.detectorInput]), 'suspicious_batch_id'),
    },
    {
      table: 'alerts',
      what: `alert of ${layout.detector}`,
      expected: p.alerts.map((r) => alertKey(r.alert)),
      keyOf: (row) => (row.src_topic === layout.detectorInput ? alertRowKey(row) : undefined),
    },
  ];
}

/** An alert as its `alerts` row can name it: host, suspicious batch and the logline ids of its warnings. */
function alertKey(
  alert: Pick<Alert, 'src_ip' | 'suspicious_batch_id'> & { result: readonly unknown[] },
): string {
  const ids = alert.result
    .map((w) => String((w as { request?: { logline_id?: unknown } }).request?.logline_id))
    .sort();
  return `${alert.src_ip} ${alert.suspicious_batch_id} [${ids.join(',')}]`;
}

function alertRowKey(row: MonitoringRow): string | undefined {
  let result: unknown;
  try {
    result = JSON.parse(String(row.result));
  } catch {
    return undefined;
  }
  if (!Array.isArray(result)) return undefined;
  return alertKey({
    src_ip: String(row.client_ip),
    suspicious_batch_id: String(row.suspicious_batch_id),
    result,
  });
}
