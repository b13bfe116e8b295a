import type { LocalClickHouse } from '../dev/clickhouse-server.ts';
import type { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import { showPath } from './format.ts';

/** A line for the cluster, then one per node with its state, pid, ports and log file. */
export function kafkaStatusLines(cluster: LocalKafkaCluster): string[] {
  const count = cluster.nodeIds().length;
  const nodes = cluster.nodeAddresses().map((a) => {
    const state = { running: 'running', stopped: 'paused', gone: 'down' }[cluster.nodeState(a.id)];
    const pid = String(cluster.pidOf(a.id) ?? '-');
    return `  node ${a.id}  ${state.padEnd(7)}  pid ${pid.padEnd(7)}  broker ${a.brokerPort}  controller ${a.controllerPort}  log ${showPath(cluster.nodeLogFile(a.id))}`;
  });
  return [
    `kafka  bootstrap ${cluster.bootstrapServers}  (${count} node${count > 1 ? 's' : ''}, cluster id ${cluster.clusterId}, data ${showPath(cluster.dataDir)})`,
    ...nodes,
  ];
}

export function clickHouseStatusLine(server: LocalClickHouse): string {
  return `clickhouse  ${server.url}  (tcp ${server.tcpPort}, pid ${server.pid() ?? '-'}, data ${showPath(server.dataDir)})`;
}
