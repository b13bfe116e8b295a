/**
 * The pipeline's line accounting: after a run, every input line must have exactly one terminal fate
 * on every path its collector's batches take (collector -> prefilter -> inspector -> detector), and
 * nothing may be there twice that must be there once. Pure: read-pipeline.ts reads, this judges.
 * docs/verify.md ("Line accounting") describes the rules.
 */
import { alertId } from '../../stages/detector/index.ts';
import { buildLedger, type Ledger, type PathLedger } from './ledger.ts';
import { checkMonitoring, type MonitoringFinding } from './monitoring-check.ts';
import type { PipelineRead, Undecodable } from './records.ts';

/** A line's terminal fate on one path, in the order a line gets further. */
export const FATES = ['rejected', 'filtered', 'normal', 'scored', 'alerted'] as const;
export type Fate = (typeof FATES)[number];

/** An input line of the run: its mark (line-marks.ts) and whether the collector should accept it. */
export interface InputLine {
  readonly id: number;
  readonly valid: boolean;
}

/** Where a lost line was last seen: it never came out of this step. */
export type LostAt = 'input' | 'logserver' | 'collector' | 'prefilter' | 'inspector' | 'detector';

export interface PathAccount {
  /** `collector/prefilter/inspector/detector`. */
  readonly path: string;
  readonly fates: Record<Fate, number>;
  readonly lost: readonly { readonly line: number; readonly at: LostAt }[];
}

/** Something that must happen once happened more often; `where` says what, for the report. */
export interface Twice {
  readonly line: number;
  readonly where: string;
}

export interface LineAccounting {
  /** Input lines. */
  readonly lines: number;
  /**
   * Lines per fate: a line's furthest fate over its paths (filtered by the DGA chain's prefilter and
   * alerted by another chain's detector is `alerted`). Lost lines are in no fate: `lines` = the sum of
   * `fates` + `lost.length`.
   */
  readonly fates: Record<Fate, number>;
  readonly paths: readonly PathAccount[];
  /** Lines without a fate on some path (or that never reached the collector), ascending. */
  readonly lost: readonly number[];
  /**
   * Lines seen twice where once is the rule: fresh (not context) in two batches of one topic,
   * forwarded or received twice, rejected twice, or with two fates on one path. Ascending.
   */
  readonly inTwoBatches: readonly number[];
  readonly twice: readonly Twice[];
  /** Valid lines the collector rejected, and invalid lines it let through. */
  readonly misjudged: readonly { readonly line: number; readonly valid: boolean }[];
  /** Batch ids at two or more positions of an inspector's input topic. */
  readonly batchesInspectedTwice: readonly string[];
  /** Batch ids at two or more positions of any batch topic, with the topic. */
  readonly batchesTwice: readonly { readonly topic: string; readonly batchId: string }[];
  /** Alert identities (alert ids) at two or more positions of one alert topic, as `topic: id`. */
  readonly alertsTwice: readonly string[];
  /** Alerts of an alerter's input (without a plugin) that never reached the external topic: their ids. */
  readonly alertsLost: readonly string[];
  /** Monitoring rows the dashboard should show once and does not show (none when not checked). */
  readonly monitoringMissing: readonly MonitoringFinding[];
  readonly monitoringTwice: readonly MonitoringFinding[];
  /** Whether ClickHouse was read: without it the two lists above are empty, not clean. */
  readonly monitoringChecked: boolean;
  /** Records of pipeline topics that are not what their topic carries, and raw lines without a mark. */
  readonly undecodable: readonly Undecodable[];
  readonly unmarked: number;
  /** Logline ids in batches that no input record became (another run's lines, or made up). */
  readonly foreignLines: number;
  /** Hosts with an alert from any detector, sorted: compared against a run without faults. */
  readonly alertedHosts: readonly string[];
  readonly ok: boolean;
  /** One sentence per kind of problem found, empty when `ok`. */
  readonly problems: readonly string[];
}

/** Accounts for every line of `input` in what `read` holds of a run. */
export function accountLines(input: readonly InputLine[], read: PipelineRead): LineAccounting {
  const ledger = buildLedger(read);
  const twice: Twice[] = [];
  const lostAt = new Map<number, LostAt>();
  const best = new Map<number, Fate>();
  const misjudged = new Map<number, boolean>();
  for (const { id } of input) {
    const n = ledger.received.get(id) ?? 0;
    if (n === 0) lostAt.set(id, 'input');
    if (n > 1) twice.push({ line: id, where: `received ${n} times by the logserver` });
  }
  const paths = ledger.paths.map((path) => accountPath(path, input, { twice, lostAt, best, misjudged }));
  const fates = emptyFates();
  for (const { id } of input) {
    const fate = best.get(id);
    if (fate !== undefined && !lostAt.has(id)) fates[fate] += 1;
  }
  const batchesTwice = repeatedBatches(ledger);
  const inspectorInputs = new Set(ledger.paths.map((p) => p.layout.inspectorInput));
  const alerts = alertFindings(ledger, read);
  const monitoring = read.clickhouseRows
    ? checkMonitoring(ledger, read.clickhouseRows)
    : { missing: [], twice: [] };
  const foreign = new Set(ledger.paths.flatMap((p) => [...p.foreign]));
  const result = {
    lines: input.length,
    fates,
    paths,
    lost: [...lostAt.keys()].sort((a, b) => a - b),
    inTwoBatches: [...new Set(twice.map((t) => t.line))].sort((a, b) => a - b),
    twice,
    misjudged: [...misjudged].map(([line, valid]) => ({ line, valid })),
    batchesInspectedTwice: batchesTwice.filter((b) => inspectorInputs.has(b.topic)).map((b) => b.batchId),
    batchesTwice,
    alertsTwice: alerts.twice,
    alertsLost: alerts.lost,
    monitoringMissing: monitoring.missing,
    monitoringTwice: monitoring.twice,
    monitoringChecked: read.clickhouseRows !== undefined,
    undecodable: read.records.undecodable,
    unmarked: ledger.unmarked.length,
    foreignLines: foreign.size,
    alertedHosts: [
      ...new Set(read.records.alerts.filter((a) => a.alertId === undefined).map((a) => a.alert.src_ip)),
    ].sort(),
  };
  const problems = problemsOf(result);
  return { ...result, ok: problems.length === 0, problems };
}

interface Sink {
  readonly twice: Twice[];
  readonly lostAt: Map<number, LostAt>;
  readonly best: Map<number, Fate>;
  readonly misjudged: Map<number, boolean>;
}

/** The fate of every line on one path; lost lines, repeats and misjudged lines go to `sink`. */
function accountPath(path: PathLedger, input: readonly InputLine[], sink: Sink): PathAccount {
  const fates = emptyFates();
  const lost: { line: number; at: LostAt }[] = [];
  const name = path.layout.name;
  const once = (id: number, n: number, what: string) => {
    if (n > 1) sink.twice.push({ line: id, where: `${what} ${n} times (${name})` });
  };
  for (const { id, valid } of input) {
    const forwarded = path.collector.forwarded.get(id) ?? 0;
    const rejected = path.collector.rejected.get(id) ?? 0;
    const collected = path.collected.get(id) ?? [];
    const passed = path.passed.get(id) ?? [];
    const suspicious = path.suspicious.get(id) ?? [];
    const filtered = path.filtered.get(id) ?? 0;
    const normal = path.normal.get(id) ?? 0;
    once(id, forwarded, 'forwarded to the collector');
    once(id, rejected, 'rejected');
    once(id, collected.length, 'fresh in collector batches');
    once(id, filtered, 'filtered out');
    once(id, passed.length, 'in batches to the inspector');
    once(id, normal, 'judged normal');
    once(id, suspicious.length, 'in suspicious batches');
    // Two fates on one path: each step decided the line one way and another.
    if (rejected > 0 && collected.length > 0)
      sink.twice.push({ line: id, where: `rejected and batched (${name})` });
    if (filtered > 0 && passed.length > 0)
      sink.twice.push({ line: id, where: `filtered out and passed on (${name})` });
    if (normal > 0 && suspicious.length > 0)
      sink.twice.push({ line: id, where: `judged normal and suspicious (${name})` });
    const fate = fateOf(path, id, { forwarded, rejected, collected, passed, suspicious, filtered, normal });
    if (typeof fate === 'object') {
      lost.push({ line: id, at: fate.lostAt });
      if (!sink.lostAt.has(id)) sink.lostAt.set(id, fate.lostAt);
      continue;
    }
    fates[fate] += 1;
    if ((fate === 'rejected') === valid) sink.misjudged.set(id, valid);
    const before = sink.best.get(id);
    if (before === undefined || FATES.indexOf(fate) > FATES.indexOf(before)) sink.best.set(id, fate);
  }
  return { path: name, fates, lost };
}

/** The line's fate on the path, or the step it was lost after. */
function fateOf(
  path: PathLedger,
  id: number,
  seen: {
    forwarded: number;
    rejected: number;
    collected: readonly string[];
    passed: readonly string[];
    suspicious: readonly string[];
    filtered: number;
    normal: number;
  },
): Fate | { lostAt: LostAt } {
  if (seen.forwarded === 0) return { lostAt: 'logserver' };
  if (seen.rejected > 0) return 'rejected';
  if (seen.collected.length === 0) return { lostAt: 'collector' };
  if (seen.suspicious.length > 0) {
    if ((path.alerted.get(id) ?? 0) > 0) return 'alerted';
    return path.scored.has(id) ? 'scored' : { lostAt: 'detector' };
  }
  if (seen.passed.length > 0) return seen.normal > 0 ? 'normal' : { lostAt: 'inspector' };
  return seen.filtered > 0 ? 'filtered' : { lostAt: 'prefilter' };
}

function repeatedBatches(ledger: Ledger): { topic: string; batchId: string }[] {
  const seen = new Map<string, { topic: string; batchId: string; n: number }>();
  const topics = new Set<string>();
  for (const path of ledger.paths)
    for (const records of [path.batches.collected, path.batches.passed, path.batches.suspicious])
      for (const r of records) {
        if (topics.has(`${r.topic}\u0000${r.partition}\u0000${r.offset}`)) continue;
        topics.add(`${r.topic}\u0000${r.partition}\u0000${r.offset}`);
        const key = `${r.topic}\u0000${r.batch.batch_id}`;
        const entry = seen.get(key) ?? { topic: r.topic, batchId: r.batch.batch_id, n: 0 };
        entry.n += 1;
        seen.set(key, entry);
      }
  return [...seen.values()].filter((e) => e.n > 1).map(({ topic, batchId }) => ({ topic, batchId }));
}

/** Alert ids twice on one topic, and alerts of plugin-free alerters missing from the external topic. */
function alertFindings(ledger: Ledger, read: PipelineRead): { twice: string[]; lost: string[] } {
  const counts = new Map<string, number>();
  const count = (topic: string, id: string) => {
    const key = `${topic}: ${id}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  for (const r of read.records.alerts) count(r.topic, r.alertId ?? alertId(r.alert));
  const outgoing = new Set(read.records.alerts.flatMap((r) => (r.alertId === undefined ? [] : [r.alertId])));
  const lost: string[] = [];
  const external = ledger.layout.externalAlerts;
  if (external !== undefined)
    for (const path of ledger.paths) {
      if (path.layout.alertersAdjust) continue;
      for (const { alerter, topic } of path.layout.alerterInputs)
        for (const r of read.records.alerts)
          if (r.topic === topic && r.alert.detector_name === path.layout.detector) {
            const id = alertId(r.alert, alerter);
            if (!outgoing.has(id)) lost.push(id);
          }
    }
  const twice = [...counts].filter(([, n]) => n > 1).map(([key]) => key);
  return { twice, lost: [...new Set(lost)] };
}

function problemsOf(r: Omit<LineAccounting, 'ok' | 'problems'>): string[] {
  const problems: string[] = [];
  /** `n text`, with the first example so that a report says where to look. */
  const add = (n: number, text: string, example: string | undefined) => {
    if (n > 0) problems.push(`${n} ${text}${example === undefined ? '' : `, e.g. ${example}`}`);
  };
  const lostAt = r.paths.flatMap((p) => p.lost.map((l) => `line ${l.line} after the ${l.at} (${p.path})`));
  const first = r.twice[0];
  const finding = (f: { table: string; id: string } | undefined) => f && `${f.table} ${f.id}`;
  add(r.lost.length, 'line(s) lost (no fate on some path)', lostAt[0] ?? `line ${r.lost[0]} never received`);
  add(
    r.inTwoBatches.length,
    'line(s) seen twice where once is the rule',
    first && `line ${first.line} ${first.where}`,
  );
  add(
    r.misjudged.length,
    'line(s) the collector judged against their validity',
    r.misjudged[0] && `line ${r.misjudged[0].line}`,
  );
  add(
    r.batchesTwice.length,
    'batch(es) twice on one topic',
    r.batchesTwice[0] && `${r.batchesTwice[0].batchId} on ${r.batchesTwice[0].topic}`,
  );
  add(r.alertsTwice.length, 'alert(s) twice on one topic', r.alertsTwice[0]);
  add(r.alertsLost.length, 'alert(s) that never left the alerter', r.alertsLost[0]);
  add(r.monitoringMissing.length, 'monitoring row(s) missing', finding(r.monitoringMissing[0]));
  add(r.monitoringTwice.length, 'monitoring row(s) visible twice', finding(r.monitoringTwice[0]));
  const bad = r.undecodable[0];
  add(
    r.undecodable.length,
    'record(s) of pipeline topics that do not decode',
    bad && `${bad.topic}@${bad.partition}:${bad.offset}: ${bad.error}`,
  );
  add(r.unmarked, 'raw line record(s) without a line mark', undefined);
  add(r.foreignLines, 'logline id(s) in batches that no input line became', undefined);
  return problems;
}

function emptyFates(): Record<Fate, number> {
  return { rejected: 0, filtered: 0, normal: 0, scored: 0, alerted: 0 };
}
