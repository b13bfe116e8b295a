/**
 * Where each input line was seen: the indexes the line accounting and the monitoring check share,
 * built once from a pipeline read. Pure. A line is seen by its mark on the raw-line topics, and from
 * the collector on by its `logline_id`, which derives from the position of the line in the collector's
 * input (its record's, and its index in a frame: each line the logserver forwarded is one logline_id,
 * and the line's mark names it).
 */
import { DETECTOR_STAGE } from '../../stages/detector/index.ts';
import { INSPECTOR_STAGE, PREFILTER_STAGE, loglineId } from '../../stages/index.ts';
import type { CollectorLayout, PathLayout, PipelineLayout } from './layout.ts';
import {
  lineKey,
  positionKey,
  rowLineKey,
  rowSource,
  type AlertRecord,
  type BatchRecord,
  type LineRecord,
  type MonitoringRow,
  type PipelineRead,
} from './records.ts';

/** How often something happened to each line (line id -> count). */
export type Tally = Map<number, number>;

export interface CollectorLedger {
  readonly layout: CollectorLayout;
  /** lineKey of each marked line of the collector's input -> its line. */
  readonly lineAt: ReadonlyMap<string, number>;
  /** logline_id the collector gives each marked input line -> its line. */
  readonly lineOf: ReadonlyMap<string, number>;
  /** Input records per line: the logserver forwarded the line this often to the collector. */
  readonly forwarded: Tally;
  /** Committed `failed_loglines` rows per line. */
  readonly rejected: Tally;
}

export interface PathLedger {
  readonly layout: PathLayout;
  readonly collector: CollectorLedger;
  /** Collector batches holding the line as a line of its own (not context): their batch ids. */
  readonly collected: ReadonlyMap<number, readonly string[]>;
  /** The prefilter's committed `filtered_out` rows per line. */
  readonly filtered: Tally;
  /** Batches the prefilter sent on holding the line as its own. */
  readonly passed: ReadonlyMap<number, readonly string[]>;
  /** The inspector's committed `finished` rows per line (decided, host not suspicious). */
  readonly normal: Tally;
  /** Suspicious batches holding the line as its own: the positions of their records. */
  readonly suspicious: ReadonlyMap<number, readonly string[]>;
  /** Lines with a committed detector row written by a suspicious batch that holds them as their own. */
  readonly scored: ReadonlySet<number>;
  /** Alerts of this path's detector (on its first alerter topic) carrying the line. */
  readonly alerted: Tally;
  /** The alerts of this path's detector on its first alerter topic. */
  readonly alerts: readonly AlertRecord[];
  /** The batch records of each of the path's batch topics. */
  readonly batches: {
    readonly collected: readonly BatchRecord[];
    readonly passed: readonly BatchRecord[];
    readonly suspicious: readonly BatchRecord[];
  };
  /** Logline ids of batches that no marked input record became. */
  readonly foreign: ReadonlySet<string>;
}

export interface Ledger {
  readonly layout: PipelineLayout;
  /** positionKey of each marked logserver input record -> its line. */
  readonly inputAt: ReadonlyMap<string, number>;
  /** Logserver input records per line. */
  readonly received: Tally;
  /** Records of the raw-line topics without a mark. */
  readonly unmarked: readonly LineRecord[];
  readonly collectors: readonly CollectorLedger[];
  readonly paths: readonly PathLedger[];
}

/** The timer's source topic of an inspector's rows (bins closed for a quiet subnet). */
export function inspectorTimerTopic(inspector: string): string {
  return `__timer.${INSPECTOR_STAGE}.${inspector}`;
}

export function buildLedger(read: PipelineRead): Ledger {
  const { layout } = read;
  const byTopic = <T extends { topic: string }>(items: readonly T[]) => {
    const map = new Map<string, T[]>();
    for (const item of items) {
      const list = map.get(item.topic);
      if (list) list.push(item);
      else map.set(item.topic, [item]);
    }
    return (topic: string): readonly T[] => map.get(topic) ?? [];
  };
  const linesOn = byTopic(read.records.lines);
  const batchesOn = byTopic(read.records.batches);
  const alertsOn = byTopic(read.records.alerts);
  const unmarked = read.records.lines.filter((r) => r.line === undefined);
  const inputAt = new Map<string, number>();
  const received: Tally = new Map();
  for (const topic of layout.logserverInputs)
    for (const r of linesOn(topic)) {
      if (r.line === undefined) continue;
      inputAt.set(positionKey(r), r.line);
      bump(received, r.line);
    }
  const timestamps = read.committedRows.logline_timestamps ?? [];
  const collectors = layout.collectors.map((c) =>
    collectorLedger(c, linesOn(c.input), read.committedRows.failed_loglines ?? []),
  );
  const paths = collectors.flatMap((collector) =>
    collector.layout.paths.map((path) =>
      pathLedger(path, collector, {
        collected: batchesOn(path.prefilterInput),
        passed: batchesOn(path.inspectorInput),
        suspicious: batchesOn(path.detectorInput),
        alerts: (path.alerterInputs[0] ? alertsOn(path.alerterInputs[0].topic) : []).filter(
          (a) => a.alert.detector_name === path.detector,
        ),
        timestamps,
      }),
    ),
  );
  return { layout, inputAt, received, unmarked, collectors, paths };
}

function collectorLedger(
  layout: CollectorLayout,
  input: readonly LineRecord[],
  failedRows: readonly MonitoringRow[],
): CollectorLedger {
  const lineAt = new Map<string, number>();
  const lineOf = new Map<string, number>();
  const forwarded: Tally = new Map();
  for (const r of input) {
    if (r.line === undefined) continue;
    lineAt.set(lineKey(r), r.line);
    // A record's `line` is the mark it carries; the collector's is the index in a frame.
    const { topic, partition, offset, index } = r;
    const at = index === undefined ? { topic, partition, offset } : { topic, partition, offset, line: index };
    lineOf.set(loglineId(at), r.line);
    bump(forwarded, r.line);
  }
  const rejected: Tally = new Map();
  for (const row of failedRows) {
    const line = lineAt.get(rowLineKey(row));
    if (line !== undefined) bump(rejected, line);
  }
  return { layout, lineAt, lineOf, forwarded, rejected };
}

function pathLedger(
  layout: PathLayout,
  collector: CollectorLedger,
  seen: {
    collected: readonly BatchRecord[];
    passed: readonly BatchRecord[];
    suspicious: readonly BatchRecord[];
    alerts: readonly AlertRecord[];
    timestamps: readonly MonitoringRow[];
  },
): PathLedger {
  const foreign = new Set<string>();
  /** Each line's own appearances in `records`, named by `name`. */
  const own = (records: readonly BatchRecord[], name: (r: BatchRecord) => string) => {
    const map = new Map<number, string[]>();
    for (const r of records)
      for (const lineId of r.batch.ownLineIds) {
        const id = collector.lineOf.get(lineId);
        if (id === undefined) foreign.add(lineId);
        else {
          const list = map.get(id);
          if (list) list.push(name(r));
          else map.set(id, [name(r)]);
        }
      }
    return map;
  };
  const suspicious = own(seen.suspicious, positionKey);
  const rowsOf = (stage: string, status: string | undefined, topics: readonly string[]) =>
    seen.timestamps.filter(
      (row) =>
        row.stage === stage &&
        (status === undefined || row.status === status) &&
        topics.includes(String(row.src_topic)),
    );
  const tallyRows = (rows: readonly MonitoringRow[]) => {
    const tally: Tally = new Map();
    for (const row of rows) {
      const id = collector.lineOf.get(String(row.logline_id));
      if (id !== undefined) bump(tally, id);
    }
    return tally;
  };
  const scored = new Set<number>();
  for (const row of rowsOf(DETECTOR_STAGE, undefined, [layout.detectorInput])) {
    const id = collector.lineOf.get(String(row.logline_id));
    if (id !== undefined && suspicious.get(id)?.includes(rowSource(row))) scored.add(id);
  }
  const alerted: Tally = new Map();
  for (const { alert } of seen.alerts) {
    const lines = new Set(alert.result.map((w) => collector.lineOf.get(w.request.logline_id)));
    for (const id of lines) if (id !== undefined) bump(alerted, id);
  }
  return {
    layout,
    collector,
    collected: own(seen.collected, (r) => r.batch.batch_id),
    filtered: tallyRows(rowsOf(PREFILTER_STAGE, 'filtered_out', [layout.prefilterInput])),
    passed: own(seen.passed, (r) => r.batch.batch_id),
    normal: tallyRows(
      rowsOf(INSPECTOR_STAGE, 'finished', [layout.inspectorInput, inspectorTimerTopic(layout.inspector)]),
    ),
    suspicious,
    scored,
    alerted,
    alerts: seen.alerts,
    batches: { collected: seen.collected, passed: seen.passed, suspicious: seen.suspicious },
    foreign,
  };
}

export function bump(tally: Tally, id: number): void {
  tally.set(id, (tally.get(id) ?? 0) + 1);
}
