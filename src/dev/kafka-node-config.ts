import { randomBytes } from 'node:crypto';
import { securedListenerSettings, type KafkaClusterSecurity } from './kafka-tls.ts';

/** A local cluster has one node, or three for replication and failover tests. */
export type ClusterSize = 1 | 3;

/** Where one combined broker+controller node listens on 127.0.0.1. */
export interface KafkaNodeAddress {
  id: number;
  brokerPort: number;
  controllerPort: number;
}

/**
 * Ports of node i (1-based): broker `basePort + (i-1)*10`, controller one above it. All derive
 * from basePort, so clusters whose base ports are 30 or more apart never collide.
 */
export const NODE_PORT_STRIDE = 10;

export function kafkaNodeAddresses(nodes: ClusterSize, basePort: number): KafkaNodeAddress[] {
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort + NODE_PORT_STRIDE * nodes > 65535) {
    throw new Error(
      `invalid Kafka base port ${basePort}: use an integer in 1024..${65535 - NODE_PORT_STRIDE * nodes}`,
    );
  }
  return Array.from({ length: nodes }, (_, i) => ({
    id: i + 1,
    brokerPort: basePort + i * NODE_PORT_STRIDE,
    controllerPort: basePort + i * NODE_PORT_STRIDE + 1,
  }));
}

export function bootstrapServersOf(addresses: readonly KafkaNodeAddress[]): string {
  return addresses.map((a) => `127.0.0.1:${a.brokerPort}`).join(',');
}

/** The optional listener for clients in a network namespace is on brokerPort + 2 of each node. */
export const NAMESPACE_LISTENER_PORT_OFFSET = 2;

/** Bootstrap servers of the namespace listeners on `host`. */
export function namespaceBootstrapOf(addresses: readonly KafkaNodeAddress[], host: string): string {
  return addresses.map((a) => `${host}:${a.brokerPort + NAMESPACE_LISTENER_PORT_OFFSET}`).join(',');
}

/**
 * Broker settings that depend on the cluster size, plus the ones that make a local cluster
 * suitable for tests. Production keeps Kafka's defaults for the latter.
 */
export function clusterBrokerSettings(nodes: ClusterSize): Record<string, string> {
  const replicas = String(nodes);
  const minIsr = nodes === 1 ? '1' : '2';
  return {
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    'offsets.topic.replication.factor': replicas,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': minIsr,
    'num.partitions': '3',
    // Tests create their topics explicitly; a typo must fail instead of creating a topic.
    'auto.create.topics.enable': 'false',
    // 50 partitions each (the default) make the first group join and initTransactions on a
    // 2-core machine take seconds; nothing local needs that many coordinators.
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.num.partitions': '10',
    // Classic protocol: no 3 s wait for more members before the first assignment.
    'group.initial.rebalance.delay.ms': '0',
    'group.min.session.timeout.ms': '6000',
    // KIP-848 (group.protocol=consumer): the session timeout and heartbeat interval are broker
    // settings; librdkafka cannot alter them per group (no IncrementalAlterConfigs in the
    // binding), so the defaults themselves are short: a dead member is noticed in 10 s instead
    // of 45 s and assignment changes arrive within a second instead of five.
    'group.consumer.min.session.timeout.ms': '6000',
    'group.consumer.session.timeout.ms': '10000',
    'group.consumer.min.heartbeat.interval.ms': '500',
    'group.consumer.heartbeat.interval.ms': '1000',
    // A killed broker is fenced (and its partitions get new leaders) when its session expires,
    // and a restarted broker cannot re-register before that (DUPLICATE_BROKER_REGISTRATION):
    // 5 s instead of 9 s makes failover and kill/restart tests faster, still 5 missed heartbeats.
    'broker.heartbeat.interval.ms': '1000',
    'broker.session.timeout.ms': '5000',
    // How often the coordinator aborts transactions past transaction.timeout.ms (default 10 s):
    // a producer killed mid-transaction blocks read_committed consumers until then.
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': '2000',
  };
}

/** Inputs of {@link renderServerProperties}. */
export interface ServerPropertiesInput {
  node: KafkaNodeAddress;
  cluster: readonly KafkaNodeAddress[];
  logDir: string;
  /**
   * Adds a listener NAMESPACE on this address (port brokerPort + 2), advertised as such, for clients
   * in a network namespace whose link to the host can be cut (see NetworkNamespace).
   */
  namespaceListenerHost?: string;
  /** Adds the SSL and SASL_SSL listeners (see kafka-tls.ts). */
  security?: KafkaClusterSecurity;
  overrides?: Record<string, string>;
}

/** The effective settings of one node, in a stable order (node identity first, overrides last). */
export function serverSettings(input: ServerPropertiesInput): Record<string, string> {
  const { node, cluster } = input;
  const ns = input.namespaceListenerHost;
  const nsListener = ns ? `,NAMESPACE://${ns}:${node.brokerPort + NAMESPACE_LISTENER_PORT_OFFSET}` : '';
  const secured = input.security === undefined ? undefined : securedListenerSettings(node, input.security);
  const extra = secured === undefined ? '' : `,${secured.listeners}`;
  return {
    'process.roles': 'broker,controller',
    'node.id': String(node.id),
    'controller.quorum.voters': cluster.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${node.brokerPort},CONTROLLER://127.0.0.1:${node.controllerPort}${nsListener}${extra}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.brokerPort}${nsListener}${extra}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${ns ? ',NAMESPACE:PLAINTEXT' : ''}${secured ? `,${secured.protocolMap}` : ''}`,
    'log.dirs': input.logDir,
    ...clusterBrokerSettings(cluster.length === 1 ? 1 : 3),
    ...secured?.settings,
    ...input.overrides,
  };
}

export function renderServerProperties(input: ServerPropertiesInput): string {
  const lines = Object.entries(serverSettings(input)).map(([key, value]) => `${key}=${escapeValue(value)}`);
  return [
    '# Generated by hamstring (src/dev/kafka-node-config.ts) on every start; edits are lost.',
    ...lines,
    '',
  ].join('\n');
}

function escapeValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** log4j2 configuration sending everything at INFO to a size-capped file in the node's directory. */
export function renderLog4j2Config(logFile: string): string {
  const file = escapeXml(logFile);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by hamstring (src/dev/kafka-node-config.ts). -->
<Configuration status="warn">
  <Appenders>
    <RollingFile name="file" fileName="${file}" filePattern="${file}.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <SizeBasedTriggeringPolicy size="50 MB"/>
      <DefaultRolloverStrategy max="2"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="org.apache.kafka.clients.NetworkClient" level="WARN"/>
  </Loggers>
</Configuration>
`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A KRaft cluster id: 16 random bytes, base64url without padding (what StorageTool random-uuid
 * prints), avoiding a leading '-' that the tool's argument parser would read as an option.
 */
export function generateClusterId(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = random(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
