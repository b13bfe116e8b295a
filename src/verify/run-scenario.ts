import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createProducer } from '../kafka/producer.ts';
import { describePartitions } from '../kafka/readiness.ts';
import { silentLogger } from '../observability/logger.ts';
import { OVERSIZED_TOPIC_MAX_BYTES, poisonSeqs } from './oversized.ts';
import { mulberry32 } from './random.ts';
import { ConcurrentReader, readAllCommitted } from './reader.ts';
import type { FaultRecord, ScenarioReport } from './report.ts';
import { THROTTLED_AFTER_FAULTS_MS, type RunPlan, type VerifyRunOptions } from './run-plan.ts';
import { scenarioReport } from './scenario-outcome.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import { WorkerGroup } from './worker-pool.ts';
import { AdminHolder, waitDrained } from './drain.ts';

export type { VerifyRunOptions } from './run-plan.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
    await sleep(THROTTLED_AFTER_FAULTS_MS);
    for (const g of groups) g.fullSpeed();
    log(`${scenario.name}: fault schedule done; draining at full speed`);
    const drained = await waitDrained(
      admin,
      o.bootstrap,
      o.records,
      plan.stages,
      o.drainTimeoutMs ?? 180_000,
    );
    log(`${scenario.name}: ${drained ? 'drained' : 'not drained'}; stopping the workers`);
    const concurrentComplete = await reader.waitFor(plan.expectedOut, 60_000);
    await Promise.all(groups.map((g) => g.stopAll('SIGTERM')));
    await reader.stop();
    log(`${scenario.name}: workers stopped; reading the output`);
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
  const throughputTarget = o.records / (o.loadSeconds ?? scenario.loadSeconds(o));
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
