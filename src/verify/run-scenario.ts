import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import { createProducer } from '../kafka/producer.ts';
import { describePartitions } from '../kafka/readiness.ts';
import { silentLogger } from '../observability/logger.ts';
import {
  checkDeadLetters,
  checkOutput,
  deadLettersHold,
  isExactlyOnce,
  type DeadLetterVerdict,
  type OutputVerdict,
} from './check.ts';
import { OVERSIZED_TOPIC_MAX_BYTES, poisonSeqs } from './oversized.ts';
import { mulberry32 } from './random.ts';
import { ConcurrentReader, readAllCommitted, type FinalRead } from './reader.ts';
import type { FaultRecord, ScenarioReport } from './report.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import { WorkerGroup, type CommitEvent } from './worker-pool.ts';
import { AdminHolder, waitDrained } from './drain.ts';

/** Options of one verification run (shared by every scenario of the run). */
export interface VerifyRunOptions {
  bootstrap: string;
  /** Set when the run started the cluster itself: broker faults need it. */
  cluster?: LocalKafkaCluster;
  records: number;
  workers: number;
  /** Partitions of every topic. Default 2 per worker, at least 3. */
  partitions?: number;
  /** Distinct keys of the seeded records. Default 64. */
  keys?: number;
  /** Worker logs and reports go here. */
  workDir: string;
  /** Seed of the abort dice and the random soak. */
  seed?: number;
  /** Duration of the random soak's fault phase. Default 120 s. */
  soakMs?: number;
  /**
   * The drain after the faults gives up when the committed offsets made no progress for this long.
   * Default 3 min. (The workers are throttled, so a long outage takes as long to work off.)
   */
  drainTimeoutMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** The network namespace for scenarios with `workersInNamespace`, and Kafka's address from inside it. */
  namespace?: { bootstrap: string; execPrefix: readonly string[]; cut(): void; heal(): void };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What one scenario run works on, decided before anything starts. */
interface RunPlan {
  readonly runId: string;
  readonly started: number;
  readonly partitions: number;
  readonly brokers: number;
  readonly rf: number;
  readonly input: string;
  readonly mid: string | undefined;
  readonly output: string;
  readonly oversizedEvery: number;
  /** Sequence numbers whose outputs Kafka refuses: they end in the dead-letter topic. */
  readonly poison: ReadonlySet<number>;
  readonly expectedOut: number;
  /** The runtime's default dead-letter topic of the (single) stage's input. */
  readonly deadLetterTopic: string;
  /** One stage, or two chained through `mid`. */
  readonly stages: readonly { group: string; from: string; to: string }[];
  readonly namespace: VerifyRunOptions['namespace'];
}

/** What the drain and the final reads found. */
interface RunOutcome {
  readonly drained: { ok: boolean; detail: string };
  readonly concurrentComplete: boolean;
  readonly final: FinalRead;
  readonly dead: FinalRead | undefined;
  readonly faults: FaultRecord[];
  readonly faultsDone: number;
}

/**
 * Runs one scenario end to end: fresh topics, N seeded records, M worker processes per stage, the
 * scenario's fault schedule under load, a concurrent read_committed reader, then the drain and the
 * checks (exactly once for both readers, committed offsets = input high watermarks, a read_committed
 * consumer reaches the end of every output partition).
 */
export async function runScenario(scenario: Scenario, o: VerifyRunOptions): Promise<ScenarioReport> {
  const log = o.log ?? (() => undefined);
  const plan = await planRun(scenario, o);
  const admin = new AdminHolder(o.bootstrap);
  const groups: WorkerGroup[] = [];
  const reader = new ConcurrentReader(o.bootstrap, plan.output);
  mkdirSync(o.workDir, { recursive: true });
  try {
    await createRunTopics(admin, plan);
    log(
      `${scenario.name}: seeding ${o.records} records into ${plan.input} (${plan.partitions} partitions, rf ${plan.rf})`,
    );
    await seedRecords(o.bootstrap, plan.input, o.records, o.keys ?? 64);
    const load = workerLoad(scenario, o);
    groups.push(...workerGroups(scenario, o, plan, load));
    await reader.start();
    for (const g of groups) for (let i = 0; i < o.workers; i += 1) g.start(`w${i}`);
    log(
      `${scenario.name}: ${o.workers} worker(s) per stage x ${groups.length} stage(s), batch ${load.batchSize}, ` +
        `throttle ${load.batchDelayMs} ms/batch (~${Math.round(load.throughputTarget)} rec/s)`,
    );
    const { faults, faultsDone } = await runFaults(scenario, o, plan, groups, log);
    log(`${scenario.name}: fault schedule done; draining`);
    const drained = await waitDrained(
      admin,
      o.bootstrap,
      o.records,
      plan.stages,
      o.drainTimeoutMs ?? 180_000,
    );
    const concurrentComplete = await reader.waitFor(plan.expectedOut, 60_000);
    await Promise.all(groups.map((g) => g.stopAll('SIGTERM')));
    await reader.stop();
    const final = await readAllCommitted(o.bootstrap, plan.output, plan.expectedOut, 120_000);
    const dead =
      plan.poison.size > 0
        ? await readAllCommitted(o.bootstrap, plan.deadLetterTopic, plan.poison.size, 60_000)
        : undefined;
    const outcome = { drained, concurrentComplete, final, dead, faults, faultsDone };
    return scenarioReport(scenario, o, plan, groups, reader, outcome);
  } finally {
    for (const g of groups) g.close();
    await reader.stop().catch(() => undefined);
    admin.close();
  }
}

async function planRun(scenario: Scenario, o: VerifyRunOptions): Promise<RunPlan> {
  const namespace = scenario.workersInNamespace ? o.namespace : undefined;
  if (scenario.workersInNamespace && !namespace)
    throw new Error(`scenario ${scenario.name} needs the run's network namespace`);
  // The dead-letter check reads the first stage's DLT only.
  if (scenario.chain && scenario.oversizedEvery)
    throw new Error(`scenario ${scenario.name}: oversized outputs are checked for a single stage only`);
  const started = Date.now();
  const runId = `${scenario.name}-${started.toString(36)}`;
  const { brokers } = await describePartitions(o.bootstrap, 15_000);
  const input = `verify-${runId}-in`;
  const mid = scenario.chain ? `verify-${runId}-mid` : undefined;
  const output = `verify-${runId}-out`;
  const oversizedEvery = scenario.oversizedEvery ?? 0;
  const poison = poisonSeqs(o.records, { every: oversizedEvery });
  return {
    runId,
    started,
    partitions: o.partitions ?? Math.max(3, o.workers * 2),
    brokers: brokers.length,
    rf: Math.min(3, brokers.length),
    input,
    mid,
    output,
    oversizedEvery,
    poison,
    expectedOut: o.records - poison.size,
    deadLetterTopic: `${input}.DLT`,
    stages: mid
      ? [
          { group: `verify-${runId}-a`, from: input, to: mid },
          { group: `verify-${runId}-b`, from: mid, to: output },
        ]
      : [{ group: `verify-${runId}`, from: input, to: output }],
    namespace,
  };
}

async function createRunTopics(admin: AdminHolder, plan: RunPlan): Promise<void> {
  await admin.current().createTopics(
    [plan.input, ...(plan.mid ? [plan.mid] : []), plan.output].map((topic) => ({
      topic,
      partitions: plan.partitions,
      replicationFactor: plan.rf,
      ...(topic === plan.output && plan.oversizedEvery > 0
        ? { config: { 'max.message.bytes': String(OVERSIZED_TOPIC_MAX_BYTES) } }
        : {}),
    })),
  );
}

/** Batch size and throttle of each worker, so the whole input takes the scenario's load time. */
function workerLoad(scenario: Scenario, o: VerifyRunOptions) {
  const throughputTarget = o.records / scenario.loadSeconds(o);
  const batchSize = Math.max(10, Math.min(500, Math.round(throughputTarget / o.workers / 4)));
  const batchDelayMs = Math.round((batchSize / (throughputTarget / o.workers)) * 1000);
  return { throughputTarget, batchSize, batchDelayMs };
}

function workerGroups(
  scenario: Scenario,
  o: VerifyRunOptions,
  plan: RunPlan,
  load: { batchSize: number; batchDelayMs: number },
): WorkerGroup[] {
  return plan.stages.map(
    (s) =>
      new WorkerGroup({
        bootstrap: plan.namespace?.bootstrap ?? o.bootstrap,
        ...(plan.namespace ? { execPrefix: plan.namespace.execPrefix } : {}),
        input: s.from,
        output: s.to,
        group: s.group,
        batchSize: load.batchSize,
        batchDelayMs: load.batchDelayMs,
        abortRatio: scenario.abortRatio,
        seed: o.seed ?? 1,
        maxPollMs: scenario.maxPollMs ?? 30_000,
        stallMs: scenario.stallMs ?? 0,
        oversizedEvery: plan.oversizedEvery,
        logFile: join(o.workDir, `${plan.runId}-${s.group.endsWith('-b') ? 'b' : 'a'}-workers.log`),
      }),
  );
}

/** The scenario's fault schedule, once the pipeline commits; each fault as applied. */
async function runFaults(
  scenario: Scenario,
  o: VerifyRunOptions,
  plan: RunPlan,
  groups: WorkerGroup[],
  log: (line: string) => void,
): Promise<{ faults: FaultRecord[]; faultsDone: number }> {
  const last = groups[groups.length - 1]!;
  const faults: FaultRecord[] = [];
  const ctx: ScenarioContext = {
    bootstrap: o.bootstrap,
    cluster: o.cluster,
    groups,
    records: o.records,
    workers: o.workers,
    random: mulberry32((o.seed ?? 1) * 7919),
    soakMs: o.soakMs ?? 120_000,
    network: plan.namespace,
    log: (line) => log(`${scenario.name}: ${line}`),
    committed: () => last.committedRecords(),
    fault: async (kind, target, action, gated = true, worker) => {
      const injectedAt = Date.now();
      log(`${scenario.name}: fault ${kind} ${target}`);
      await action();
      faults.push({
        kind,
        target,
        injectedAt,
        restoredAt: Date.now(),
        gated,
        ...(worker ? { worker } : {}),
      });
    },
  };
  // Faults start once the pipeline commits: the baseline throughput needs a few seconds of load.
  await waitUntil(() => last.committedRecords() > 0, 120_000);
  await sleep(3_000);
  await scenario.run(ctx);
  return { faults, faultsDone: Date.now() };
}

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

function scenarioReport(
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
      Math.min(faultsDone + 30_000, lastCommits.at(-1)?.at ?? 0),
    ),
    livenessRestarts,
    warnings,
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

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
  return true;
}

/** Seeds `count` records `<i>` keyed `k-<i % keys>` (idempotent producer, acks=all). */
async function seedRecords(bootstrap: string, topic: string, count: number, keys: number): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'verify-seed',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 120_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  for (let i = 0; i < count; i += 1) await p.produce({ topic, key: `k-${i % keys}`, value: String(i) });
  await p.flush(180_000);
  // Delivery reports reach JavaScript on the next polls after the flush.
  const deadline = Date.now() + 30_000;
  while (p.tally().delivered + p.tally().failed < count && Date.now() < deadline) await sleep(100);
  const t = p.tally();
  await p.close(10_000);
  if (t.failed > 0 || t.delivered < count)
    throw new Error(
      `seeding ${topic}: ${t.delivered}/${count} delivered, ${t.failed} failed (${t.firstError?.message})`,
    );
}
