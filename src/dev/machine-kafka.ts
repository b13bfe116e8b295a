import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { PLAINTEXT_SECURITY } from '../config/index.ts';
import { probeKafkaReady } from '../kafka/readiness.ts';
import { findJava } from './executables.ts';
import { requireKafkaDistribution } from './kafka-distribution.ts';
import {
  generateClusterId,
  renderLog4j2Config,
  renderServerProperties,
  type KafkaNodeAddress,
} from './kafka-node-config.ts';
import { formatKafkaNode, kafkaNodeJvmArgs, type KafkaRuntime } from './kafka-node-process.ts';
import { kafkaNodeFiles } from './kafka-state.ts';
import { MachineNetwork, type SimulatedMachine } from './machine-network.ts';
import { nodeLogTail } from './kafka-cluster-files.ts';
import { processState, spawnDetached, terminate, type DetachedProcess } from './process-control.ts';

export interface MachineKafkaOptions {
  /** Wiped first: a fresh cluster every time. */
  readonly dataDir: string;
  /** One combined broker+controller node per machine (node id = machine index); 3 for a quorum. */
  readonly machines: readonly SimulatedMachine[];
  /** Broker port on every machine's address; the controller listens one above. */
  readonly brokerPort: number;
  readonly heapMb?: number;
  readonly brokerOverrides?: Record<string, string>;
  readonly readyTimeoutMs?: number;
}

/**
 * A KRaft cluster whose nodes run on simulated machines (machine-network.ts), each bound to its
 * machine's address: losing a machine loses its broker and its controller vote too, as on real
 * hardware. The settings are those of a local 3-node cluster (kafka-node-config.ts), so a fenced
 * broker's partitions get new leaders within seconds. The nodes are detached; they die with their
 * machines ({@link MachineNetwork.remove} kills whatever runs on them).
 */
export class MachineKafka {
  readonly bootstrapServers: string;
  readonly #nodes = new Map<
    number,
    { machine: SimulatedMachine; process: DetachedProcess; marker: string }
  >();

  private constructor(
    readonly dataDir: string,
    private readonly machines: readonly SimulatedMachine[],
    brokerPort: number,
  ) {
    this.bootstrapServers = machines.map((m) => `${m.address}:${brokerPort}`).join(',');
  }

  static async start(o: MachineKafkaOptions): Promise<MachineKafka> {
    rmSync(o.dataDir, { recursive: true, force: true });
    const distribution = requireKafkaDistribution();
    const runtime: KafkaRuntime = {
      java: findJava(),
      libsDir: distribution.libsDir,
      heapMb: o.heapMb ?? 512,
    };
    const cluster = new MachineKafka(o.dataDir, o.machines, o.brokerPort);
    const addresses: KafkaNodeAddress[] = o.machines.map((m) => ({
      id: m.index,
      brokerPort: o.brokerPort,
      controllerPort: o.brokerPort + 1,
    }));
    const voters = o.machines.map((m) => `${m.index}@${m.address}:${o.brokerPort + 1}`).join(',');
    const clusterId = generateClusterId();
    for (const m of o.machines) {
      const files = kafkaNodeFiles(o.dataDir, m.index);
      mkdirSync(files.logDir, { recursive: true });
      const node = addresses.find((a) => a.id === m.index) ?? {
        id: m.index,
        brokerPort: 0,
        controllerPort: 0,
      };
      const properties = renderServerProperties({
        node,
        cluster: addresses,
        logDir: files.logDir,
        overrides: {
          listeners: `PLAINTEXT://${m.address}:${o.brokerPort},CONTROLLER://${m.address}:${o.brokerPort + 1}`,
          'advertised.listeners': `PLAINTEXT://${m.address}:${o.brokerPort}`,
          'controller.quorum.voters': voters,
          ...o.brokerOverrides,
        },
      });
      writeFileSync(files.serverProperties, properties);
      writeFileSync(files.log4j2, renderLog4j2Config(files.serverLog));
    }
    await Promise.all(
      o.machines.map((m) => formatKafkaNode(runtime, clusterId, kafkaNodeFiles(o.dataDir, m.index))),
    );
    for (const m of o.machines) {
      const files = kafkaNodeFiles(o.dataDir, m.index);
      const [ip, ...prefix] = MachineNetwork.execPrefix(m);
      // `ip netns exec` execs the JVM: the pid is the node's own.
      const child = spawnDetached(
        ip ?? 'ip',
        [...prefix, runtime.java, ...kafkaNodeJvmArgs(runtime, files)],
        {
          cwd: files.dir,
          outputFile: files.processLog,
        },
      );
      cluster.#nodes.set(m.index, { machine: m, process: child, marker: files.serverProperties });
    }
    try {
      await probeKafkaReady(cluster.bootstrapServers, o.readyTimeoutMs ?? 240_000, {
        security: PLAINTEXT_SECURITY,
      });
    } catch (e) {
      const tails = o.machines.map((m) => nodeLogTail(o.dataDir, m.index)).join('\n');
      await cluster.stop();
      throw new Error(`the machines' Kafka cluster did not become ready: ${(e as Error).message}${tails}`);
    }
    return cluster;
  }

  /** Node id (the machine's index) of every node whose process is alive. */
  runningNodes(): number[] {
    return [...this.#nodes]
      .filter(([, n]) => processState(n.process.pid, n.marker) !== 'gone')
      .map(([id]) => id);
  }

  /** SIGTERM to every node (SIGKILL after 15 s: a node on a lost machine cannot shut down cleanly). */
  async stop(): Promise<void> {
    await Promise.all([...this.#nodes.values()].map((n) => terminate(n.process.pid, n.marker, 15_000)));
  }

  /** The machines the nodes run on. */
  get nodeMachines(): readonly SimulatedMachine[] {
    return this.machines;
  }
}
