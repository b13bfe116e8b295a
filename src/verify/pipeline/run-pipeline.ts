import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { LocalKafkaCluster } from '../../dev/kafka-cluster.ts';
import { NetworkNamespace } from '../../dev/network-namespace.ts';
import { createAdmin, type AdminPort } from '../../kafka/admin.ts';
import { drainMonitoringAgent } from '../../monitoring/agent-drain.ts';
import { monitoringTopic } from '../../monitoring/events.ts';
import { pipelineComponents } from '../../stages/index.ts';
import { feedLines, verifyTraffic, type TrafficShape } from './feed.ts';
import { faultSchedule, networkCutTarget, type InjectedFault, type PlannedFault } from './faults.ts';
import { layoutTopics, pipelineLayout } from './layout.ts';
import { accountLines, type LineAccounting } from './line-fates.ts';
import { writePipelineConfig } from './pipeline-config.ts';
import { agentProcess, componentProcess, PipelineProcesses, type ProcessSpec } from './processes.ts';
import { waitQuiet } from './quiet.ts';
import { readPipeline } from './read-pipeline.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Past the config's session timeout (6 s): the stopped stage's partitions move to nobody, then back. */
const SIGSTOP_MS = 10_000;
/** At least this long between the end of one fault and the next, so that each meets a pipeline at work. */
const FAULT_GAP_MS = 2_000;
/** How long the cut stage is cut off: past the session timeout too, as a cable pulled for a while. */
const CUT_MS = 12_000;
/** How long a killed broker or ClickHouse stays down. */
const DOWN_MS = 3_000;
/** No topic grew this long: the pipeline is idle (longer than any timer of the run's config). */
const QUIET_MS = 15_000;
const DRAIN_TIMEOUT_MS = 300_000;

export interface PipelineRunOptions {
  readonly seed: number;
  readonly traffic: TrafficShape;
  /** Wall time the feed spreads the lines over (the faults happen within it). */
  readonly feedMs: number;
  readonly faults: boolean;
  /** Everything of the run: the broker's data, the config, the state, the process logs. */
  readonly dir: string;
  readonly kafkaBasePort: number;
  readonly clickhouse: LocalClickHouse;
  readonly database: string;
  readonly baseConfig: string;
  readonly inspectors: 'shipped' | 'pass-all';
  readonly log: (line: string) => void;
}

export interface PipelineRunReport {
  readonly seed: number;
  readonly faulted: boolean;
  readonly lines: number;
  /** Of them, the hostile lines the collector must reject. */
  readonly invalidLines: number;
  readonly infectedHosts: readonly string[];
  readonly faults: readonly InjectedFault[];
  /** Why the run cut no stage's network (no root, no `ip netns`), when it did not. */
  readonly networkCutSkipped?: string;
  /** Whether the pipeline went idle after the feed and the faults (else it is stuck somewhere). */
  readonly wentQuiet: boolean;
  /** Partitions whose rows the agent had not all copied at the deadline (empty: it had). */
  readonly agentBehind: readonly string[];
  readonly unexpectedExits: readonly { label: string; code: number | null; signal: string | null }[];
  readonly accounting: LineAccounting;
  readonly durationMs: number;
}

/** One run: a fresh broker, the pipeline as processes, the seed's traffic, its faults, the accounting. */
export async function runPipeline(o: PipelineRunOptions): Promise<PipelineRunReport> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const noCut = o.faults ? NetworkNamespace.unavailableReason() : 'no faults';
  // Tagged by the run's port, as the broker's data: runs on other ports never share a namespace.
  const namespace = noCut === undefined ? NetworkNamespace.create(o.kafkaBasePort) : undefined;
  try {
    return await runInCluster(o, namespace, noCut, began);
  } finally {
    namespace?.remove();
  }
}

async function runInCluster(
  o: PipelineRunOptions,
  namespace: NetworkNamespace | undefined,
  noCut: string | undefined,
  began: number,
): Promise<PipelineRunReport> {
  const cluster = await LocalKafkaCluster.start({
    nodes: 1,
    dataDir: join(o.dir, 'kafka'),
    basePort: o.kafkaBasePort,
    ...(namespace ? { namespaceListenerHost: namespace.hostAddress } : {}),
  });
  const admin = createAdmin(cluster.bootstrapServers, 'verify-pipeline');
  const { path, config } = writePipelineConfig({
    baseConfig: o.baseConfig,
    dir: o.dir,
    bootstrap: cluster.bootstrapServers,
    clickhousePort: o.clickhouse.httpPort,
    database: o.database,
    inspectors: o.inspectors,
  });
  const components = pipelineComponents(config).filter((c) => c.kind !== 'webhook' && c.kind !== 'syslog');
  const stageSpecs = components.map((c) => componentProcess(c, path));
  const stageLabels = stageSpecs.map((s) => s.label);
  const cutTarget = namespace ? networkCutTarget(o.seed, stageLabels) : undefined;
  const inNamespace = (s: ProcessSpec): ProcessSpec =>
    namespace && s.label === cutTarget
      ? {
          ...s,
          prefix: namespace.execPrefix(),
          env: { KAFKA_BOOTSTRAP_SERVERS: cluster.namespaceBootstrap(namespace.hostAddress) },
        }
      : s;
  const specs = [...stageSpecs.map(inNamespace), agentProcess(path)];
  const processes = new PipelineProcesses(specs, join(o.dir, 'processes.log'));
  try {
    const traffic = verifyTraffic(o.traffic);
    const layout = pipelineLayout(config);
    processes.startAll();
    const [input] = layout.logserverInputs;
    if (input === undefined) throw new Error('the config has no logserver input topic');
    // Every stage made its topics: each process is up, so the first lines meet a whole pipeline.
    const topics = layoutTopics(layout);
    await waitTopics(admin, [...topics.lines, ...topics.batches, ...topics.alerts], 180_000);
    o.log(
      `seed ${o.seed}${o.faults ? '' : ' (no faults)'}: feeding ${traffic.lines.length} lines over ${o.feedMs / 1000} s`,
    );
    const planned = o.faults ? faultSchedule(o.seed, stageLabels, o.feedMs, cutTarget) : [];
    if (o.faults && noCut !== undefined) o.log(`seed ${o.seed}: no network cut: ${noCut}`);
    const feedStart = Date.now();
    const [, faults] = await Promise.all([
      feedLines(cluster.bootstrapServers, input, traffic.lines, o.feedMs),
      injectAll(planned, feedStart, { processes, cluster, clickhouse: o.clickhouse, namespace, log: o.log }),
    ]);
    o.log(`seed ${o.seed}: fed; waiting until the pipeline is idle`);
    const samples = monitoringTopic('fill_levels');
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    const topicsStill = await waitQuiet(admin, QUIET_MS, deadline, (all) =>
      all.filter((t) => !t.startsWith('__') && t !== samples),
    );
    // The agent writes to ClickHouse, not to a topic: one retrying an insert (ClickHouse restarted a
    // moment ago) leaves every topic still. Its group's offsets tell when it copied every row.
    // Once the stages stopped writing: their fill-level samples never stand still.
    await processes.stopStages();
    const agent = await drainMonitoringAgent({
      bootstrap: cluster.bootstrapServers,
      timeoutMs: Math.max(30_000, deadline - Date.now()),
    });
    const wentQuiet = topicsStill;
    const agentBehind = agent.drained ? [] : agent.behind.map((p) => `${p.topic}:${p.partition}`);
    await processes.stopAll();
    const read = await readPipeline({ config, database: o.database });
    const accounting = accountLines(
      traffic.lines.map((l) => ({ id: l.id, valid: l.valid })),
      read,
    );
    return {
      seed: o.seed,
      faulted: o.faults,
      lines: traffic.lines.length,
      invalidLines: traffic.lines.filter((l) => !l.valid).length,
      infectedHosts: traffic.truth
        .filter((h) => h.role !== 'benign')
        .map((h) => h.ip)
        .sort(),
      faults,
      ...(o.faults && noCut !== undefined ? { networkCutSkipped: noCut } : {}),
      wentQuiet,
      agentBehind,
      unexpectedExits: processes.unexpectedExits,
      accounting,
      durationMs: Date.now() - began,
    };
  } finally {
    await processes.stopAll().catch(() => undefined);
    admin.close();
    await cluster.stop();
  }
}

async function waitTopics(admin: AdminPort, topics: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const have = new Set(await admin.listTopics(15_000).catch(() => []));
    if (topics.every((t) => have.has(t))) return;
    if (Date.now() > deadline)
      throw new Error(`topics not created within ${timeoutMs / 1000} s: ${topics.join(', ')}`);
    await sleep(500);
  }
}

interface FaultTargets {
  readonly processes: PipelineProcesses;
  readonly cluster: LocalKafkaCluster;
  readonly clickhouse: LocalClickHouse;
  readonly namespace: NetworkNamespace | undefined;
  readonly log: (line: string) => void;
}

/** Runs the schedule, each fault at its time after `from`; a fault whose action failed says so. */
async function injectAll(
  planned: readonly PlannedFault[],
  from: number,
  t: FaultTargets,
): Promise<InjectedFault[]> {
  const done: InjectedFault[] = [];
  let lastEnd = 0;
  for (const f of planned) {
    const wait = Math.max(from + f.atMs, lastEnd + FAULT_GAP_MS) - Date.now();
    if (wait > 0) await sleep(wait);
    const injectedAt = Date.now();
    t.log(`fault ${f.kind} ${f.target} at +${((injectedAt - from) / 1000).toFixed(1)} s`);
    let error: string | undefined;
    try {
      await inject(f, t);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    lastEnd = Date.now();
    done.push({
      ...f,
      atActualMs: injectedAt - from,
      injectedAt,
      restoredAt: lastEnd,
      ...(error === undefined ? {} : { error }),
    });
  }
  return done;
}

async function inject(f: PlannedFault, t: FaultTargets): Promise<void> {
  switch (f.kind) {
    case 'stage-kill-9':
    case 'agent-kill-9':
      await t.processes.restart(f.target, 'SIGKILL');
      return;
    case 'stage-sigstop':
      t.processes.signal(f.target, 'SIGSTOP');
      await sleep(SIGSTOP_MS);
      t.processes.signal(f.target, 'SIGCONT');
      return;
    case 'broker-kill-9': {
      const [node] = t.cluster.nodeIds();
      if (node === undefined) throw new Error('no broker to kill');
      await t.cluster.killNode(node);
      await sleep(DOWN_MS);
      await t.cluster.startNode(node);
      return;
    }
    case 'network-cut':
      if (!t.namespace) throw new Error('no network namespace to cut');
      t.namespace.cut();
      try {
        await sleep(CUT_MS);
      } finally {
        t.namespace.heal();
      }
      return;
    case 'clickhouse-kill-9':
      await t.clickhouse.kill();
      await sleep(DOWN_MS);
      await t.clickhouse.restart();
      return;
  }
}
