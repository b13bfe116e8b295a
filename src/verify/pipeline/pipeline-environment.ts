import { join } from 'node:path';
import type { HamstringConfig } from '../../config/index.ts';
import type { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { LocalKafkaCluster } from '../../dev/kafka-cluster.ts';
import { NetworkNamespace } from '../../dev/network-namespace.ts';
import { createAdmin, type AdminPort } from '../../kafka/admin.ts';
import { drainMonitoringAgent } from '../../monitoring/agent-drain.ts';
import { pipelineComponents } from '../../stages/index.ts';
import { networkCutTarget } from './faults.ts';
import { layoutTopics, pipelineLayout, type PipelineLayout } from './layout.ts';
import { writePipelineConfig } from './pipeline-config.ts';
import { agentProcess, componentProcess, PipelineProcesses, type ProcessSpec } from './processes.ts';
import { waitStagesDrained } from './stage-drain.ts';
import { stageGroups } from './stage-groups.ts';

/**
 * How long every stage group must stay at the end of its inputs: longer than the run's timers (the
 * collector's 1 s batch timeout) and than its 6 s session timeout, so that a stage killed just before
 * the end has left its group (which then has no member until the restarted process joins).
 */
const STAY_MS = 10_000;
const DRAIN_TIMEOUT_MS = 300_000;
/** Every stage process up and its topics made, a broker restart included. */
const TOPICS_TIMEOUT_MS = 180_000;

/** Where a verification run's pipeline runs: its broker, ClickHouse database and folder. */
export interface PipelineEnvironmentOptions {
  readonly seed: number;
  /** Everything of the run: the broker's data, the config, the state, the process logs. */
  readonly dir: string;
  readonly kafkaBasePort: number;
  readonly clickhouse: LocalClickHouse;
  readonly database: string;
  readonly baseConfig: string;
  readonly inspectors: 'shipped' | 'pass-all';
  /** Whether the run injects faults: only then does one stage run in a network namespace. */
  readonly faults: boolean;
}

/**
 * A fresh one-node broker, the run's config, and the pipeline's processes (not started yet): every
 * configured component as a `hamstring run` process and the monitoring agent. With faults, and where
 * namespaces can be made, the seed's {@link networkCutTarget} stage runs in a network namespace of
 * its own, reaching the broker through the namespace listener, so that its link can be cut.
 */
export class PipelineEnvironment {
  private constructor(
    readonly cluster: LocalKafkaCluster,
    readonly admin: AdminPort,
    readonly config: HamstringConfig,
    readonly layout: PipelineLayout,
    readonly processes: PipelineProcesses,
    readonly stageLabels: readonly string[],
    /** The stage whose network the run can cut, if any. */
    readonly cutTarget: string | undefined,
    readonly namespace: NetworkNamespace | undefined,
    /** Why no stage's network can be cut in this run, when none can. */
    readonly noCut: string | undefined,
  ) {}

  static async start(o: PipelineEnvironmentOptions): Promise<PipelineEnvironment> {
    const noCut = o.faults ? NetworkNamespace.unavailableReason() : 'no faults';
    // Tagged by the run's port, as the broker's data: runs on other ports never share a namespace.
    const namespace = noCut === undefined ? NetworkNamespace.create(o.kafkaBasePort) : undefined;
    let cluster: LocalKafkaCluster | undefined;
    try {
      cluster = await LocalKafkaCluster.start({
        nodes: 1,
        dataDir: join(o.dir, 'kafka'),
        basePort: o.kafkaBasePort,
        ...(namespace ? { namespaceListenerHost: namespace.hostAddress } : {}),
      });
      const { path, config } = writePipelineConfig({
        baseConfig: o.baseConfig,
        dir: o.dir,
        bootstrap: cluster.bootstrapServers,
        clickhousePort: o.clickhouse.httpPort,
        database: o.database,
        inspectors: o.inspectors,
      });
      const components = pipelineComponents(config).filter(
        (c) => c.kind !== 'webhook' && c.kind !== 'syslog',
      );
      const stageSpecs = components.map((c) => componentProcess(c, path));
      const stageLabels = stageSpecs.map((s) => s.label);
      const cutTarget = namespace ? networkCutTarget(o.seed, stageLabels) : undefined;
      const nsBootstrap = namespace ? cluster.namespaceBootstrap(namespace.hostAddress) : undefined;
      const inNamespace = (s: ProcessSpec): ProcessSpec =>
        namespace && nsBootstrap !== undefined && s.label === cutTarget
          ? { ...s, prefix: namespace.execPrefix(), env: { KAFKA_BOOTSTRAP_SERVERS: nsBootstrap } }
          : s;
      const specs = [...stageSpecs.map(inNamespace), agentProcess(path)];
      return new PipelineEnvironment(
        cluster,
        createAdmin(cluster.bootstrapServers, 'verify-pipeline'),
        config,
        pipelineLayout(config),
        new PipelineProcesses(specs, join(o.dir, 'processes.log')),
        stageLabels,
        cutTarget,
        namespace,
        noCut,
      );
    } catch (e) {
      await cluster?.stop();
      namespace?.remove();
      throw e;
    }
  }

  /**
   * Starts every process and waits until each stage made its topics, so that the first lines meet a
   * whole pipeline. Returns the logserver's input topic, where the lines go.
   */
  async startPipeline(): Promise<string> {
    const [input] = this.layout.logserverInputs;
    if (input === undefined) throw new Error('the config has no logserver input topic');
    this.processes.startAll();
    const t = layoutTopics(this.layout);
    const topics = [...t.lines, ...t.batches, ...t.alerts];
    await waitForTopics(this.admin, topics, TOPICS_TIMEOUT_MS);
    return input;
  }

  /**
   * The end of a run: waits until every stage group has a member and has committed its inputs to
   * their end, and stays so for {@link STAY_MS} (src/verify/pipeline/stage-drain.ts; `onDrained`
   * then), stops the stages with SIGTERM, waits until the agent copied every monitoring row, and
   * stops it. `stagesBehind` names the groups still behind at the deadline (empty: none).
   */
  async settle(onDrained?: () => void): Promise<{ stagesBehind: string[]; agentBehind: string[] }> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    const stages = await waitStagesDrained({
      admin: this.admin,
      bootstrap: this.cluster.bootstrapServers,
      groups: stageGroups(this.config, this.layout),
      plainTopics: new Set(this.layout.logserverInputs),
      stayMs: STAY_MS,
      timeoutMs: DRAIN_TIMEOUT_MS,
    });
    onDrained?.();
    // The agent writes to ClickHouse, not to a topic: its group's offsets tell when it copied every
    // row, once the stages stopped writing.
    await this.processes.stopStages();
    const agent = await drainMonitoringAgent({
      bootstrap: this.cluster.bootstrapServers,
      timeoutMs: Math.max(30_000, deadline - Date.now()),
    });
    await this.processes.stopAll();
    return {
      stagesBehind: [...stages.behind],
      agentBehind: agent.drained ? [] : agent.behind.map((p) => `${p.topic}:${p.partition}`),
    };
  }

  /** Stops every process, the broker, and removes the namespace. */
  async close(): Promise<void> {
    await this.processes.stopAll().catch(() => undefined);
    this.admin.close();
    await this.cluster.stop();
    this.namespace?.remove();
  }
}

/**
 * Waits until the broker lists every one of `topics` (the stages create theirs as they start).
 * @throws Error naming the topics when `timeoutMs` passes first.
 */
export async function waitForTopics(
  admin: AdminPort,
  topics: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const have = new Set(await admin.listTopics(15_000).catch(() => []));
    if (topics.every((topic) => have.has(topic))) return;
    if (Date.now() > deadline)
      throw new Error(`topics not created within ${timeoutMs / 1000} s: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
