/**
 * The verdict of one scenario run: the exactly-once checks of both readers, the dead letters, the
 * drain, recovery times per fault and throughput before and after the faults, as a ScenarioReport.
 */
import {
  checkDeadLetters,
  checkOutput,
  deadLettersHold,
  isExactlyOnce,
  type DeadLetterVerdict,
  type OutputVerdict,
} from './check.ts';
import type { ConcurrentReader } from './reader.ts';
import type { FaultRecord, ScenarioReport } from './report.ts';
import {
  THROTTLED_AFTER_FAULTS_MS,
  type RunOutcome,
  type RunPlan,
  type VerifyRunOptions,
} from './run-plan.ts';
import type { Scenario } from './scenario.ts';
import type { CommitEvent, WorkerGroup } from './worker-pool.ts';

/** Per fault: how long until any worker, and the worker hit, committed again; commits meanwhile. */
function timeRecoveries(faults: FaultRecord[], allCommits: readonly CommitEvent[]): void {
  for (const f of faults) {
    const next = allCommits.find((c) => c.at > f.injectedAt);
    if (next) f.recoveryMs = next.at - f.injectedAt;
    f.commitsDuring = allCommits.filter((c) => c.at > f.injectedAt + 1_000 && c.at < f.restoredAt).length;
    const w = f.worker;
    const own =
      w && allCommits.find((c) => c.at > f.restoredAt && c.group === w.group && c.instance === w.instance);
    if (own) f.workerRecoveryMs = own.at - f.injectedAt;
  }
}

/** The checks that failed, one line each. */
function problemsOf(
  plan: RunPlan,
  outcome: RunOutcome,
  verdicts: { final: OutputVerdict; concurrent: OutputVerdict; deadLetters: DeadLetterVerdict | undefined },
  unexpectedExits: readonly { instance: string; code: number | null }[],
): string[] {
  const { drained, final, dead } = outcome;
  const { deadLetters } = verdicts;
  const problems: string[] = [];
  if (!isExactlyOnce(verdicts.final)) problems.push(`final read: ${verdictText(verdicts.final)}`);
  if (!isExactlyOnce(verdicts.concurrent) || !outcome.concurrentComplete)
    problems.push(`concurrent reader: ${verdictText(verdicts.concurrent)}`);
  if (!drained.ok)
    problems.push(`committed offsets differ from the input high watermarks: ${drained.detail}`);
  if (!final.reachedEnd)
    problems.push(
      `read_committed consumer stuck ${final.lagAtEnd ?? '?'} before the end (open transaction?)`,
    );
  if (deadLetters && !deadLettersHold(deadLetters))
    problems.push(
      `dead letters: ${deadLetters.received} read for ${deadLetters.expected} oversized, ${deadLetters.duplicates} ` +
        `duplicates, ${deadLetters.missing} missing, ${deadLetters.foreign} not oversized, ${deadLetters.wrongKind} ` +
        `without error.kind refused (samples ${JSON.stringify(deadLetters.samples)})`,
    );
  if (dead && !dead.reachedEnd)
    problems.push(
      `read_committed consumer stuck ${dead.lagAtEnd ?? '?'} before the end of ${plan.deadLetterTopic}`,
    );
  if (unexpectedExits.length > 0)
    problems.push(`workers failed: ${unexpectedExits.map((e) => `${e.instance} exit ${e.code}`).join(', ')}`);
  return problems;
}

export function scenarioReport(
  scenario: Scenario,
  o: VerifyRunOptions,
  plan: RunPlan,
  groups: readonly WorkerGroup[],
  reader: ConcurrentReader,
  outcome: RunOutcome,
): ScenarioReport {
  const { started, poison, mid } = plan;
  const { final, dead, drained, faults, faultsDone } = outcome;
  const last = groups[groups.length - 1]!;
  const aborted = new Set(groups.flatMap((g) => [...g.abortedAttempts]));
  const finalVerdict = checkOutput(final.records, o.records, aborted, poison);
  const concurrentVerdict = checkOutput(reader.records.values(), o.records, aborted, poison);
  const deadLetters = dead && checkDeadLetters(dead.records, poison);
  const allCommits = groups.flatMap((g) => g.commits).sort((a, b) => a.at - b.at);
  timeRecoveries(faults, allCommits);
  const lastCommits = last.commits;
  const firstFault = faults[0]?.injectedAt;
  const lastRestore = faults.length > 0 ? Math.max(...faults.map((f) => f.restoredAt)) : undefined;
  const exits = groups.flatMap((g) =>
    g.exits.map((e) => ({ group: g.spec.group, instance: e.instance, code: e.code, signal: e.signal })),
  );
  const unexpectedExits = exits.filter((e) => e.code !== 0 && e.code !== null);
  const livenessRestarts = groups.flatMap((g) =>
    g.livenessRestarts.map((r) => ({ group: g.spec.group, ...r })),
  );
  const warnings =
    livenessRestarts.length > 0
      ? [
          `${livenessRestarts.length} worker(s) hung (status().live went false) and were restarted by the ` +
            `verifier's supervisor: ${livenessRestarts.map((r) => `${r.instance} at +${((r.at - started) / 1000).toFixed(0)} s`).join(', ')}`,
        ]
      : [];
  const problems = problemsOf(
    plan,
    outcome,
    { final: finalVerdict, concurrent: concurrentVerdict, deadLetters },
    unexpectedExits,
  );
  const recoveries = faults.flatMap((f) => (f.recoveryMs === undefined ? [] : [f.recoveryMs]));
  const workerRecoveries: Record<string, number> = {};
  for (const g of groups)
    for (const [what, n] of g.recoveries) workerRecoveries[what] = (workerRecoveries[what] ?? 0) + n;
  return {
    scenario: scenario.name,
    description: scenario.description,
    ok: problems.length === 0,
    problems,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    cluster: `${plan.brokers} broker(s) at ${o.bootstrap}`,
    records: o.records,
    workers: o.workers,
    recordsIn: o.records,
    recordsOut: finalVerdict.received,
    duplicates: finalVerdict.duplicates,
    lost: finalVerdict.lost,
    reordered: finalVerdict.reordered,
    abortedVisible: finalVerdict.abortedVisible,
    injectedAborts: aborted.size,
    commits: allCommits.length,
    faults,
    maxRecoveryMs: recoveries.length > 0 ? Math.max(...recoveries) : undefined,
    maxWorkerRecoveryMs: maxOf(faults.map((f) => f.workerRecoveryMs)),
    // Without faults "before" is the whole run.
    throughputBefore: rate(lastCommits, lastCommits[0]?.at, firstFault ?? lastCommits.at(-1)?.at),
    throughputAfter: rate(
      lastCommits,
      lastRestore,
      Math.min(faultsDone + THROTTLED_AFTER_FAULTS_MS, lastCommits.at(-1)?.at ?? 0),
    ),
    livenessRestarts,
    warnings,
    workerRecoveries,
    committedOffsetsMatch: drained.ok,
    committedOffsetsDetail: drained.detail,
    noHangingTransaction: final.reachedEnd && (dead?.reachedEnd ?? true),
    final: finalVerdict,
    concurrent: concurrentVerdict,
    ...(deadLetters ? { deadLetters } : {}),
    workerExits: exits,
    topics: {
      input: plan.input,
      output: plan.output,
      ...(mid ? { mid } : {}),
      ...(dead ? { deadLetter: plan.deadLetterTopic } : {}),
    },
  };
}

function maxOf(xs: readonly (number | undefined)[]): number | undefined {
  const ns = xs.filter((x): x is number => x !== undefined);
  return ns.length > 0 ? Math.max(...ns) : undefined;
}

function verdictText(v: ReturnType<typeof checkOutput>): string {
  return (
    `${v.received} read, ${v.duplicates} duplicates, ${v.lost} lost, ${v.reordered} reordered, ` +
    `${v.abortedVisible} from aborted transactions, ${v.unexpected} unexpected ` +
    `(samples ${JSON.stringify(v.samples)})`
  );
}

/** Records per second committed between two instants (undefined when the window is empty). */
function rate(
  commits: readonly { at: number; records: number }[],
  from?: number,
  to?: number,
): number | undefined {
  if (from === undefined || to === undefined || to - from < 1_000) return undefined;
  const n = commits.filter((c) => c.at > from && c.at <= to).reduce((s, c) => s + c.records, 0);
  return n / ((to - from) / 1000);
}
