import { PLAINTEXT_SECURITY } from '../config/index.ts';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { probeKafkaReady } from '../kafka/readiness.ts';
import { waitNodeInSync } from './kafka-node-sync.ts';
import { findJava } from './executables.ts';
import { requireKafkaDistribution } from './kafka-distribution.ts';
import {
  bootstrapServersOf,
  kafkaNodeAddresses,
  namespaceBootstrapOf,
  type ClusterSize,
  type KafkaNodeAddress,
} from './kafka-node-config.ts';
import { formatKafkaNode, launchKafkaNode, type KafkaRuntime } from './kafka-node-process.ts';
import {
  kafkaLayoutFile,
  kafkaLayoutSchema,
  kafkaNodeFiles,
  kafkaRunningFile,
  kafkaRunningStateSchema,
  type KafkaLayout,
  type KafkaRunningState,
} from './kafka-state.ts';
import {
  SASL_SSL_LISTENER_PORT_OFFSET,
  SSL_LISTENER_PORT_OFFSET,
  scramFormatArgs,
  securedBootstrapOf,
  type KafkaClusterSecurity,
} from './kafka-tls.ts';
import {
  assertRunningLayout,
  loadOrCreateLayout,
  nodeLogTail,
  writeNodeConfigs,
} from './kafka-cluster-files.ts';
import { resolveDataDir } from './paths.ts';
import { AbortPoll, pollUntil } from './poll.ts';
import { assertPortsFree, canConnect, type PortClaim } from './ports.ts';
import {
  killAndWait,
  pauseOrResume,
  processState,
  terminate,
  type DetachedProcess,
  type ProcessState,
} from './process-control.ts';
import { readStateFile, removeStateFile, writeStateFile } from './state-file.ts';

/** Options of {@link LocalKafkaCluster.start}. */
export interface KafkaClusterOptions {
  nodes: ClusterSize;
  dataDir: string;
  /**
   * First broker port; node i listens on basePort + (i-1)*10 (broker) and +1 (controller).
   * Default: the port the data dir was created with, else 9092.
   */
  basePort?: number;
  /** Max heap per node JVM. Default 768 for one node, 512 each for three. */
  heapMb?: number;
  /** Extra server.properties entries, applied last (they win over the generated ones). */
  brokerOverrides?: Record<string, string>;
  /**
   * Adds a listener on this host address (port brokerPort + 2 of each node) for clients in a
   * network namespace (NetworkNamespace.hostAddress); see {@link namespaceBootstrap}.
   */
  namespaceListenerHost?: string;
  /**
   * Adds an SSL (mTLS) and a SASL_SSL listener to every node, SCRAM users, optionally ACLs (see
   * kafka-tls.ts); {@link sslBootstrap} and {@link saslSslBootstrap} name them.
   */
  security?: KafkaClusterSecurity;
  /** Deadline for the cluster to become ready. Default 180 s. */
  readyTimeoutMs?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 180_000;
const LISTEN_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 30_000;

/**
 * A local KRaft cluster of combined broker+controller JVMs on 127.0.0.1, for development and
 * tests. The processes are detached and described by a state file (`kafka-state.json`) in the data
 * directory, so any process can attach to a cluster started by another (the CLI, a test runner)
 * and kill, pause or restart its nodes.
 */
export class LocalKafkaCluster {
  readonly dataDir: string;
  readonly bootstrapServers: string;
  /** True when {@link start} found the cluster already running and attached to it. */
  readonly wasAlreadyRunning: boolean;
  readonly layout: KafkaLayout;
  private readonly addresses: KafkaNodeAddress[];
  /** Children spawned by this process: their exit status makes start errors precise. */
  private readonly children = new Map<number, DetachedProcess>();

  private constructor(dataDir: string, layout: KafkaLayout, wasAlreadyRunning: boolean) {
    this.dataDir = dataDir;
    this.layout = layout;
    this.addresses = kafkaNodeAddresses(layout.nodes, layout.basePort);
    this.bootstrapServers = bootstrapServersOf(this.addresses);
    this.wasAlreadyRunning = wasAlreadyRunning;
  }

  /**
   * Starts the cluster in `opts.dataDir`, or attaches to it when its processes are already
   * running (restarting any node that died), then waits until it is ready (see
   * {@link waitReady}). Formats node storage only the first time. A failed start stops the
   * nodes it launched and rejects with the reason (for instance "port 9092 in use", or a node's
   * last log lines when it exited).
   */
  static async start(opts: KafkaClusterOptions): Promise<LocalKafkaCluster> {
    const dataDir = resolveDataDir(opts.dataDir);
    const readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    const running = LocalKafkaCluster.attach(dataDir);
    if (running) {
      assertRunningLayout(dataDir, running.layout, opts);
      const dead = running.nodeIds().filter((id) => !running.isNodeRunning(id));
      if (dead.length > 0) await running.launch(dead, running.readRunning().heapMb, readyTimeoutMs);
      await running.waitReady(readyTimeoutMs);
      return running;
    }

    const java = findJava();
    const distribution = requireKafkaDistribution();
    mkdirSync(dataDir, { recursive: true });
    const layout = loadOrCreateLayout(dataDir, opts, distribution.version);
    const cluster = new LocalKafkaCluster(dataDir, layout, false);
    const runtime: KafkaRuntime = {
      java,
      libsDir: distribution.libsDir,
      heapMb: opts.heapMb ?? (opts.nodes === 1 ? 768 : 512),
    };
    writeNodeConfigs(
      dataDir,
      cluster.addresses,
      opts.brokerOverrides ?? {},
      opts.namespaceListenerHost,
      opts.security,
    );
    await assertPortsFree(cluster.portClaims(cluster.nodeIds()));
    await cluster.formatUnformatted(runtime, scramFormatArgs(opts.security?.users ?? []));
    writeStateFile(kafkaRunningFile(dataDir), {
      ...runtime,
      bootstrapServers: cluster.bootstrapServers,
      nodes: [],
    } satisfies KafkaRunningState);
    try {
      await cluster.launch(cluster.nodeIds(), runtime.heapMb, readyTimeoutMs);
      await cluster.waitReady(readyTimeoutMs);
    } catch (error) {
      await cluster.stop().catch(() => undefined);
      throw error;
    }
    return cluster;
  }

  /**
   * The cluster described by the state file in `dataDir`, or undefined when there is no state
   * file or none of its node processes is alive (`includeDown`: even then, so that the only node
   * of a 1-node cluster killed with `dev kafka kill` can be started again; `dev kafka stop` removes
   * the state file, so a stopped cluster still needs `dev kafka start`). Does not wait for readiness.
   */
  static attach(dataDir: string, opts: { includeDown?: boolean } = {}): LocalKafkaCluster | undefined {
    const dir = resolveDataDir(dataDir);
    const running = readStateFile(kafkaRunningFile(dir), kafkaRunningStateSchema);
    const layout = readStateFile(kafkaLayoutFile(dir), kafkaLayoutSchema);
    if (!running || !layout) return undefined;
    const cluster = new LocalKafkaCluster(dir, layout, true);
    if (opts.includeDown) return cluster;
    return cluster.nodeIds().some((id) => cluster.isNodeRunning(id)) ? cluster : undefined;
  }

  nodeIds(): number[] {
    return this.addresses.map((a) => a.id);
  }

  /** Ports of each node (broker listener, controller listener). */
  nodeAddresses(): readonly KafkaNodeAddress[] {
    return this.addresses;
  }

  /** The KRaft cluster id the nodes were formatted with. */
  get clusterId(): string {
    return this.layout.clusterId;
  }

  /** kill -9 the node and wait until its process is gone. */
  async killNode(id: number): Promise<void> {
    const pid = this.pidOf(id);
    if (pid !== undefined) await killAndWait(pid, this.marker(id));
  }

  /** SIGSTOP: the node stops answering but keeps its sockets, like a long GC pause or a hung host. */
  pauseNode(id: number): void {
    this.signalRunningNode(id, 'SIGSTOP');
  }

  /** SIGCONT after {@link pauseNode}. */
  resumeNode(id: number): void {
    this.signalRunningNode(id, 'SIGCONT');
  }

  /** SIGTERM (controlled shutdown), then SIGKILL when it takes more than 30 s. */
  async stopNode(id: number): Promise<void> {
    const pid = this.pidOf(id);
    if (pid !== undefined) await terminate(pid, this.marker(id), STOP_GRACE_MS);
  }

  /**
   * Starts a stopped or killed node and waits until it listens and is back in the ISR of every
   * partition it replicates; when all other nodes run too, until no partition is
   * under-replicated. A node that is already running is left alone.
   */
  async startNode(id: number, timeoutMs = DEFAULT_READY_TIMEOUT_MS): Promise<void> {
    this.assertNode(id);
    if (this.isNodeRunning(id)) return;
    await this.launch([id], this.readRunning().heapMb, timeoutMs);
    await this.waitNodeInSync(id, timeoutMs);
  }

  /** True while the node's process exists (a paused node counts as running). */
  isNodeRunning(id: number): boolean {
    return this.nodeState(id) !== 'gone';
  }

  /** 'running', 'stopped' (paused with SIGSTOP) or 'gone'. */
  nodeState(id: number): ProcessState {
    const pid = this.pidOf(id);
    return pid === undefined ? 'gone' : processState(pid, this.marker(id));
  }

  /** The node's JVM pid from the state file, whether or not it is still alive. */
  pidOf(id: number): number | undefined {
    this.assertNode(id);
    return this.readRunningOrUndefined()?.nodes.find((n) => n.id === id)?.pid;
  }

  /** Where node `id` writes its server log. */
  nodeLogFile(id: number): string {
    return kafkaNodeFiles(this.dataDir, id).serverLog;
  }

  /**
   * Resolves when a transactional producer can init and commit and a consumer group member gets
   * an assignment (see probeKafkaReady); rejects naming what was not ready at the deadline.
   */
  async waitReady(timeoutMs = DEFAULT_READY_TIMEOUT_MS): Promise<void> {
    await probeKafkaReady(this.bootstrapServers, timeoutMs, { security: PLAINTEXT_SECURITY });
  }

  /** Stops all nodes (SIGTERM, SIGKILL after 30 s) and removes the state file; the data stays. */
  async stop(): Promise<void> {
    await Promise.all(this.nodeIds().map((id) => this.stopNode(id)));
    removeStateFile(kafkaRunningFile(this.dataDir));
  }

  private async launch(ids: readonly number[], heapMb: number, timeoutMs: number): Promise<void> {
    const running = this.readRunning();
    const runtime: KafkaRuntime = { java: running.java, libsDir: running.libsDir, heapMb };
    await assertPortsFree(this.portClaims(ids));
    for (const id of ids) {
      const address = this.address(id);
      const child = launchKafkaNode(runtime, kafkaNodeFiles(this.dataDir, id));
      this.children.set(id, child);
      const state = this.readRunning();
      const nodes = state.nodes.filter((n) => n.id !== id);
      nodes.push({ id, pid: child.pid, ...portsOf(address), startedAt: new Date().toISOString() });
      writeStateFile(kafkaRunningFile(this.dataDir), { ...state, nodes });
    }
    await Promise.all(ids.map((id) => this.waitListening(id, Math.min(timeoutMs, LISTEN_TIMEOUT_MS))));
  }

  private async waitListening(id: number, timeoutMs: number): Promise<void> {
    const { brokerPort } = this.address(id);
    await pollUntil(
      async () => {
        if (!this.isNodeRunning(id)) throw new AbortPoll(this.exitedError(id, 'during start'));
        return canConnect(brokerPort);
      },
      {
        timeoutMs,
        intervalMs: 250,
        onTimeout: () =>
          new Error(
            `Kafka node ${id} did not listen on port ${brokerPort} within ${timeoutMs} ms${nodeLogTail(this.dataDir, id)}`,
          ),
      },
    );
  }

  private async waitNodeInSync(id: number, timeoutMs: number): Promise<void> {
    await waitNodeInSync({
      bootstrapServers: this.bootstrapServers,
      id,
      timeoutMs,
      exited: () => (this.isNodeRunning(id) ? undefined : this.exitedError(id, 'while rejoining')),
      othersUp: () => this.nodeIds().every((n) => n === id || this.nodeState(n) === 'running'),
    });
  }

  private exitedError(id: number, when: string): Error {
    const status = this.children.get(id)?.exitStatus();
    const how = status ? ` (${status.signal ? `signal ${status.signal}` : `exit code ${status.code}`})` : '';
    return new Error(`Kafka node ${id} exited ${when}${how}${nodeLogTail(this.dataDir, id)}`);
  }

  private async formatUnformatted(runtime: KafkaRuntime, extraArgs: readonly string[]): Promise<void> {
    const unformatted = this.nodeIds().filter(
      (id) => !existsSync(kafkaNodeFiles(this.dataDir, id).metaProperties),
    );
    await Promise.all(
      unformatted.map((id) =>
        formatKafkaNode(runtime, this.layout.clusterId, kafkaNodeFiles(this.dataDir, id), extraArgs),
      ),
    );
  }

  /** Bootstrap servers of the SSL listeners (client certificates required); see KafkaClusterOptions.security. */
  get sslBootstrap(): string {
    return securedBootstrapOf(this.addresses, SSL_LISTENER_PORT_OFFSET);
  }

  /** Bootstrap servers of the SASL_SSL listeners. */
  get saslSslBootstrap(): string {
    return securedBootstrapOf(this.addresses, SASL_SSL_LISTENER_PORT_OFFSET);
  }

  /**
   * Bootstrap servers for clients in the network namespace whose host end is `host`. Throws when
   * the cluster was started without that namespace listener.
   */
  namespaceBootstrap(host: string): string {
    const props = readFileSync(kafkaNodeFiles(this.dataDir, this.addresses[0]!.id).serverProperties, 'utf8');
    if (!props.includes(`NAMESPACE://${host}:`)) {
      throw new Error(
        `the Kafka cluster in ${this.dataDir} has no listener on ${host}; it was started without ` +
          `namespaceListenerHost (stop it and start it again)`,
      );
    }
    return namespaceBootstrapOf(this.addresses, host);
  }

  private portClaims(ids: readonly number[]): PortClaim[] {
    return ids.flatMap((id) => {
      const a = this.address(id);
      return [
        { port: a.brokerPort, purpose: `Kafka node ${id} broker listener` },
        { port: a.controllerPort, purpose: `Kafka node ${id} controller listener` },
      ];
    });
  }

  private signalRunningNode(id: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    const pid = this.pidOf(id);
    if (pid === undefined || !this.isNodeRunning(id)) throw new Error(`Kafka node ${id} is not running`);
    pauseOrResume(pid, this.marker(id), signal);
  }

  private marker(id: number): string {
    return kafkaNodeFiles(this.dataDir, id).serverProperties;
  }

  private address(id: number): KafkaNodeAddress {
    const address = this.addresses.find((a) => a.id === id);
    if (!address) throw new Error(`no Kafka node ${id}: this cluster has nodes ${this.nodeIds().join(', ')}`);
    return address;
  }

  private assertNode(id: number): void {
    this.address(id);
  }

  private readRunningOrUndefined(): KafkaRunningState | undefined {
    return readStateFile(kafkaRunningFile(this.dataDir), kafkaRunningStateSchema);
  }

  private readRunning(): KafkaRunningState {
    const running = this.readRunningOrUndefined();
    if (!running) throw new Error(`Kafka in ${this.dataDir} was stopped (no state file); start it again`);
    return running;
  }
}

function portsOf(address: KafkaNodeAddress): { brokerPort: number; controllerPort: number } {
  return { brokerPort: address.brokerPort, controllerPort: address.controllerPort };
}
