import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';

/** config.yaml as a tree of sections, as the benches edit it before writing or validating it. */
export type ConfigTree = Record<string, Record<string, unknown>>;

/**
 * A bench's set-up for the stages at the shipped settings: `dir` emptied, a private 1-node broker
 * in it on `port`, and config.yaml's tree pointed at that broker, with the stages' local state in
 * `dir` and no alert file in the working tree (every other setting as shipped).
 */
export async function shippedSetup(
  dir: string,
  port: number,
): Promise<{ cluster: LocalKafkaCluster; tree: ConfigTree }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cluster = await LocalKafkaCluster.start({ nodes: 1, dataDir: join(dir, 'kafka'), basePort: port });
  const tree = parseYaml(readFileSync('config.yaml', 'utf8')) as ConfigTree;
  tree.environment!.kafka_bootstrap_servers = cluster.bootstrapServers;
  (tree.pipeline!.alerting as Record<string, unknown>).log_to_file = false;
  tree.runtime = { state: { dir: join(dir, 'state') } };
  return { cluster, tree };
}
