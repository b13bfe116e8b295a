import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HamstringConfig } from '../../config/index.ts';
import type { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { MachineKafka } from '../../dev/machine-kafka.ts';
import { MachineNetwork, type SimulatedMachine } from '../../dev/machine-network.ts';
import { createAdmin, type AdminPort } from '../../kafka/admin.ts';
import { drainMonitoringAgent } from '../../monitoring/agent-drain.ts';
import { monitoringTopic } from '../../monitoring/events.ts';
import { pipelineComponents } from '../../stages/index.ts';
import { layoutTopics, pipelineLayout, type PipelineLayout } from '../pipeline/layout.ts';
import { writePipelineConfig } from '../pipeline/pipeline-config.ts';
import {
  agentProcess,
  componentProcess,
  PipelineProcesses,
  type ProcessSpec,
} from '../pipeline/processes.ts';
import { waitForTopics } from '../pipeline/pipeline-environment.ts';
import { waitQuiet } from '../pipeline/quiet.ts';

/** Instances of each stage kind on every machine (`collector: 2`); a kind not named runs once. */
export type InstanceCounts = Readonly<Partial<Record<string, number>>>;

export interface SimulatedPipelineOptions {
  /** Names the machines and their subnet (machine-network.ts). */
  readonly tag: number;
  /**
   * Machines built (at least 3): the first three run a Kafka node each (a quorum that survives
   * losing one); every machine runs the stages. More join later with {@link SimulatedPipeline.addMachine}.
   */
  readonly machines: number;
  /** Stage processes per kind on every machine. */
  readonly instances?: InstanceCounts;
  /** Per machine (`m2`), counts that override {@link instances}; 0 runs none of that kind there. */
  readonly instancesOn?: Readonly<Record<string, InstanceCounts>>;
  readonly dir: string;
  /** The Kafka broker port on every machine's address (the controller one above). */
  readonly brokerPort: number;
  /** Partitions of the topics the stages create. */
  readonly partitions: number;
  readonly clickhouse: LocalClickHouse;
  readonly database: string;
  readonly baseConfig: string;
  readonly inspectors: 'shipped' | 'pass-all';
  /** Which kinds run (default every configured component but webhook and syslog). */
  readonly kinds?: readonly string[];
}

const QUIET_MS = 15_000;
const DRAIN_TIMEOUT_MS = 300_000;
const TOPICS_TIMEOUT_MS = 240_000;

/**
 * A whole pipeline across simulated machines: each machine a network namespace on one bridge,
 * running one node of a KRaft cluster bound to its address and `instances` `hamstring run`
 * processes per stage; ClickHouse and the monitoring agent run on the host. Each machine has its
 * config (the same cluster and database, its own state dir), as an operator installs one per host.
 * A process is labelled `<machine> <stage label> i<n>` and runs under that instance id.
 */
export class SimulatedPipeline {
  /** The stage processes of machines added after the start, one group per machine. */
  readonly joined: PipelineProcesses[] = [];

  private constructor(
    private readonly o: SimulatedPipelineOptions,
    readonly network: MachineNetwork,
    readonly kafka: MachineKafka,
    readonly admin: AdminPort,
    readonly config: HamstringConfig,
    readonly layout: PipelineLayout,
    readonly processes: PipelineProcesses,
  ) {}

  static async start(o: SimulatedPipelineOptions): Promise<SimulatedPipeline> {
    mkdirSync(o.dir, { recursive: true });
    const network = MachineNetwork.create(o.tag, o.machines);
    let kafka: MachineKafka | undefined;
    try {
      kafka = await MachineKafka.start({
        dataDir: join(o.dir, 'kafka'),
        // A quorum of three voters; further machines run stages only.
        machines: network.machines.slice(0, 3),
        brokerPort: o.brokerPort,
        heapMb: 384,
      });
      // The host's config: the agent, the feed and the accounting read with it.
      const { path, config } = configAt(o, join(o.dir, 'host'), kafka.bootstrapServers);
      const bootstrap = kafka.bootstrapServers;
      const specs = [...network.machines.flatMap((m) => stageSpecs(o, m, bootstrap)), agentProcess(path)];
      return new SimulatedPipeline(
        o,
        network,
        kafka,
        createAdmin(bootstrap, 'simulated-machines'),
        config,
        pipelineLayout(config),
        new PipelineProcesses(specs, join(o.dir, 'processes.log')),
      );
    } catch (e) {
      await kafka?.stop();
      MachineNetwork.remove(o.tag);
      throw e;
    }
  }

  /**
   * Builds machine `index` beyond the first ones (no Kafka node: a machine joining a running
   * pipeline) and starts its stage processes; nothing else restarts. Returns its processes.
   */
  addMachine(index: number): PipelineProcesses {
    const m = this.network.grow(index);
    const group = new PipelineProcesses(
      stageSpecs(this.o, m, this.kafka.bootstrapServers),
      join(this.o.dir, `processes-${m.name}.log`),
    );
    this.joined.push(group);
    group.startAll();
    return group;
  }

  /** The machine a process runs on (from its label), or undefined for host processes. */
  static machineOf(label: string): string | undefined {
    const first = label.split(' ')[0];
    return first !== undefined && /^m\d+$/.test(first) ? first : undefined;
  }

  /**
   * Starts every process and waits until the stages made their topics. Returns the logserver's
   * input topic.
   */
  async startPipeline(): Promise<string> {
    const [input] = this.layout.logserverInputs;
    if (input === undefined) throw new Error('the config has no logserver input topic');
    this.processes.startAll();
    const t = layoutTopics(this.layout);
    const topics = this.o.kinds === undefined ? [...t.lines, ...t.batches, ...t.alerts] : t.lines;
    await waitForTopics(this.admin, topics, TOPICS_TIMEOUT_MS);
    return input;
  }

  /**
   * Waits until no topic grew for 15 s, stops the stages, waits until the agent copied every
   * monitoring row, stops it (as PipelineEnvironment.settle).
   */
  async settle(): Promise<{ wentQuiet: boolean; agentBehind: string[] }> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    const fills = monitoringTopic('fill_levels');
    const wentQuiet = await waitQuiet(this.admin, QUIET_MS, deadline, (all) =>
      all.filter((t) => !t.startsWith('__') && t !== fills),
    );
    await Promise.all([...this.joined, this.processes].map((p) => p.stopStages()));
    const agent = await drainMonitoringAgent({
      bootstrap: this.kafka.bootstrapServers,
      timeoutMs: Math.max(30_000, deadline - Date.now()),
    });
    await this.processes.stopAll();
    return {
      wentQuiet,
      agentBehind: agent.drained ? [] : agent.behind.map((p) => `${p.topic}:${p.partition}`),
    };
  }

  /** Stops every process, the Kafka nodes, and removes the machines (killing whatever is left on them). */
  async close(): Promise<void> {
    await Promise.all([...this.joined, this.processes].map((p) => p.stopAll().catch(() => undefined)));
    this.admin.close();
    await this.kafka.stop().catch(() => undefined);
    MachineNetwork.remove(this.o.tag);
  }
}

/**
 * The stage processes of machine `m`, `instances` of each kind, with the machine's config (its own
 * state dir) and run through `ip netns exec`.
 */
function stageSpecs(o: SimulatedPipelineOptions, m: SimulatedMachine, bootstrap: string): ProcessSpec[] {
  const { path, config } = configAt(o, join(o.dir, m.name), bootstrap);
  const components = pipelineComponents(config).filter(
    (c) => c.kind !== 'webhook' && c.kind !== 'syslog' && (o.kinds === undefined || o.kinds.includes(c.kind)),
  );
  return components.flatMap((c) => {
    const base = componentProcess(c, path);
    const count = o.instancesOn?.[m.name]?.[c.kind] ?? o.instances?.[c.kind] ?? 1;
    return Array.from({ length: count }, (_, i) => ({
      ...base,
      label: `${m.name} ${base.label} i${i + 1}`,
      args: [...base.args, '--partitions', String(o.partitions)],
      prefix: MachineNetwork.execPrefix(m),
    }));
  });
}

/** The run's config in `dir`, pointed at the machines' cluster. */
function configAt(
  o: SimulatedPipelineOptions,
  dir: string,
  bootstrap: string,
): { path: string; config: HamstringConfig } {
  return writePipelineConfig({
    baseConfig: o.baseConfig,
    dir,
    bootstrap,
    clickhousePort: o.clickhouse.httpPort,
    database: o.database,
    inspectors: o.inspectors,
  });
}
