import type { DeadLetterVerdict, OutputVerdict } from './check.ts';

/** One fault as applied: what, to whom, and when (epoch ms). */
export interface FaultRecord {
  kind: string;
  target: string;
  injectedAt: number;
  restoredAt: number;
  /** First commit of any worker after the fault was injected, minus injectedAt. */
  recoveryMs?: number;
  /** Commits of any worker from 1 s after the injection until the restore (a fault that halts all: 0). */
  commitsDuring?: number;
  /** Worker faults: the worker hit, and its own first commit after the fault, minus injectedAt. */
  worker?: { group: string; instance: string };
  workerRecoveryMs?: number;
  /** False when the progress gate timed out (or the input ran out) and the fault fired anyway. */
  gated: boolean;
}

/** The outcome of one scenario: the numbers of the issue's report table, and the raw verdicts. */
export interface ScenarioReport {
  scenario: string;
  description: string;
  ok: boolean;
  problems: string[];
  startedAt: string;
  durationMs: number;
  cluster: string;
  records: number;
  workers: number;
  recordsIn: number;
  recordsOut: number;
  duplicates: number;
  lost: number;
  reordered: number;
  abortedVisible: number;
  /** Transactions the abort hook aborted (faults abort more; those are not counted here). */
  injectedAborts: number;
  commits: number;
  faults: FaultRecord[];
  maxRecoveryMs: number | undefined;
  /** Worker faults: the longest time until the restarted worker committed again. */
  maxWorkerRecoveryMs: number | undefined;
  throughputBefore: number | undefined;
  throughputAfter: number | undefined;
  /** Workers restarted because they stopped being live (hung); exactly-once may hold, liveness did not. */
  livenessRestarts: { group: string; instance: string; at: number }[];
  /** Findings that are not exactly-once violations (liveness restarts). */
  warnings: string[];
  /**
   * The recoveries the workers ran, by `<situation> <code> (<kind>) on <operation> -> <action>`,
   * with their count.
   */
  workerRecoveries: Record<string, number>;
  committedOffsetsMatch: boolean;
  committedOffsetsDetail: string;
  noHangingTransaction: boolean;
  final: OutputVerdict;
  concurrent: OutputVerdict;
  /** Scenarios with oversized outputs: the dead-letter topic against the poison records. */
  deadLetters?: DeadLetterVerdict;
  workerExits: { group: string; instance: string; code: number | null; signal: string | null }[];
  topics: { input: string; output: string; mid?: string; deadLetter?: string };
}

const num = (n: number | undefined, digits = 0): string => (n === undefined ? '-' : n.toFixed(digits));
const secs = (ms: number | undefined): string => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);

/** The markdown table of a run: one row per scenario. */
export function markdownTable(reports: readonly ScenarioReport[]): string {
  const head =
    '| scenario | ok | in | out | dup | lost | reordered | aborted visible | injected aborts | faults | max recovery (any commit) | max worker recovery | liveness restarts | rec/s before | rec/s after | offsets = HW | LSO = HW | duration |';
  const rule = `|${head
    .split('|')
    .slice(1, -1)
    .map(() => '---')
    .join('|')}|`;
  const rows = reports.map(
    (r) =>
      `| ${r.scenario} | ${r.ok ? 'yes' : '**NO**'} | ${r.recordsIn} | ${r.recordsOut} | ${r.duplicates} | ${r.lost} | ${r.reordered} | ${r.abortedVisible} | ${r.injectedAborts} | ${r.faults.length} | ${secs(r.maxRecoveryMs)} | ${secs(r.maxWorkerRecoveryMs)} | ${r.livenessRestarts.length} | ${num(r.throughputBefore)} | ${num(r.throughputAfter)} | ${r.committedOffsetsMatch ? 'yes' : 'no'} | ${r.noHangingTransaction ? 'yes' : 'no'} | ${secs(r.durationMs)} |`,
  );
  const problems = reports
    .filter((r) => r.problems.length > 0)
    .map((r) => `- ${r.scenario}: ${r.problems.join('; ')}`);
  const deadLetters = reports.flatMap((r) =>
    r.deadLetters
      ? [
          `- ${r.scenario}: ${r.deadLetters.received} dead letter(s) for ${r.deadLetters.expected} oversized ` +
            `output(s): ${r.deadLetters.duplicates} duplicated, ${r.deadLetters.missing} missing, ` +
            `${r.deadLetters.foreign} not oversized, ${r.deadLetters.wrongKind} without error.kind refused`,
        ]
      : [],
  );
  const warnings = reports
    .filter((r) => r.warnings.length > 0)
    .map((r) => `- ${r.scenario}: ${r.warnings.join('; ')}`);
  const recoveries = reports
    .filter((r) => Object.keys(r.workerRecoveries).length > 0)
    .map(
      (r) =>
        `- ${r.scenario}: ${Object.entries(r.workerRecoveries)
          .sort(([, a], [, b]) => b - a)
          .map(([what, n]) => `${what} x${n}`)
          .join(', ')}`,
    );
  return [
    head,
    rule,
    ...rows,
    ...(deadLetters.length > 0 ? ['', 'Dead letters:', ...deadLetters] : []),
    ...(problems.length > 0 ? ['', 'Problems:', ...problems] : []),
    ...(warnings.length > 0 ? ['', 'Warnings:', ...warnings] : []),
    ...(recoveries.length > 0 ? ['', 'Worker recoveries:', ...recoveries] : []),
  ].join('\n');
}

/** The faults of one scenario as a markdown list (for the per-scenario file). */
export function faultLines(r: ScenarioReport): string[] {
  const t0 = Date.parse(r.startedAt);
  return r.faults.map(
    (f) =>
      `- +${secs(f.injectedAt - t0)} ${f.kind} ${f.target}: lasted ${secs(f.restoredAt - f.injectedAt)}, ` +
      `first commit after ${secs(f.recoveryMs)}` +
      (f.worker ? `, first commit of the restarted worker after ${secs(f.workerRecoveryMs)}` : '') +
      (f.commitsDuring !== undefined ? `, ${f.commitsDuring} commit(s) while it lasted` : '') +
      (f.gated ? '' : ' (progress gate timed out)'),
  );
}
