import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import {
  generateClusterId,
  renderLog4j2Config,
  renderServerProperties,
  type KafkaNodeAddress,
} from './kafka-node-config.ts';
import type { KafkaClusterSecurity } from './kafka-tls.ts';
import { kafkaLayoutFile, kafkaLayoutSchema, kafkaNodeFiles, type KafkaLayout } from './kafka-state.ts';
import { tailFile } from './process-control.ts';
import { readStateFile, writeStateFile } from './state-file.ts';

// What a local cluster keeps in its data directory: its layout, each node's configs and logs.

const DEFAULT_BASE_PORT = 9092;

/**
 * The data dir keeps its cluster id and size across stops, since formatted storage belongs to
 * them; the base port follows the caller when given.
 */
export function loadOrCreateLayout(
  dataDir: string,
  opts: { nodes: 1 | 3; basePort?: number | undefined },
  kafkaVersion: string,
): KafkaLayout {
  const existing = readStateFile(kafkaLayoutFile(dataDir), kafkaLayoutSchema);
  if (existing && existing.nodes !== opts.nodes) {
    throw new Error(
      `${dataDir} holds a ${existing.nodes}-node Kafka cluster, not ${opts.nodes}; remove the directory or pass --nodes ${existing.nodes}`,
    );
  }
  const layout: KafkaLayout = {
    clusterId: existing?.clusterId ?? formattedClusterId(dataDir, opts.nodes) ?? generateClusterId(),
    nodes: opts.nodes,
    basePort: opts.basePort ?? existing?.basePort ?? DEFAULT_BASE_PORT,
    kafkaVersion,
    createdAt: existing?.createdAt ?? new Date().toISOString(),
  };
  writeStateFile(kafkaLayoutFile(dataDir), layout);
  return layout;
}

/** A running cluster can be attached to only with the size and base port it was started with. */
export function assertRunningLayout(
  dataDir: string,
  layout: KafkaLayout,
  opts: { nodes: 1 | 3; basePort?: number | undefined },
): void {
  if (opts.nodes !== layout.nodes)
    throw new Error(
      `${dataDir} runs a ${layout.nodes}-node Kafka cluster, not ${opts.nodes}; stop it or use another data dir`,
    );
  if (opts.basePort !== undefined && opts.basePort !== layout.basePort)
    throw new Error(
      `${dataDir} runs Kafka on base port ${layout.basePort}, not ${opts.basePort}; stop it first`,
    );
}

/** The cluster id already formatted into a node's storage, when the layout file was lost. */
function formattedClusterId(dataDir: string, nodes: number): string | undefined {
  for (let id = 1; id <= nodes; id++) {
    const file = kafkaNodeFiles(dataDir, id).metaProperties;
    if (!existsSync(file)) continue;
    const match = /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'));
    if (match) return match[1]!.trim();
  }
  return undefined;
}

/** Writes server.properties and the log4j2 config of every node. */
export function writeNodeConfigs(
  dataDir: string,
  addresses: readonly KafkaNodeAddress[],
  overrides: Record<string, string>,
  namespaceListenerHost?: string,
  security?: KafkaClusterSecurity,
): void {
  for (const node of addresses) {
    const files = kafkaNodeFiles(dataDir, node.id);
    mkdirSync(files.logDir, { recursive: true });
    writeFileSync(
      files.serverProperties,
      renderServerProperties({
        node,
        cluster: addresses,
        logDir: files.logDir,
        overrides,
        ...(namespaceListenerHost ? { namespaceListenerHost } : {}),
        ...(security ? { security } : {}),
      }),
    );
    writeFileSync(files.log4j2, renderLog4j2Config(files.serverLog));
  }
}

/** The last lines of a node's process output and server log, for error messages. */
export function nodeLogTail(dataDir: string, id: number): string {
  const files = kafkaNodeFiles(dataDir, id);
  const output = tailFile(files.processLog, 10);
  const log = tailFile(files.serverLog, 15);
  const parts = [
    output && `--- ${files.processLog}\n${output}`,
    log && `--- ${files.serverLog}\n${log}`,
  ].filter(Boolean);
  return parts.length > 0 ? `, last log lines:\n${parts.join('\n')}` : '';
}
