import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { loadConfig, type HamstringConfig } from '../../config/index.ts';

type Tree = Record<string, unknown>;
const section = (tree: Tree, key: string): Tree => {
  const value = tree[key];
  if (value === null || typeof value !== 'object') throw new Error(`config: ${key} is not a section`);
  return value as Tree;
};

/** Where one verification run's pipeline reads and writes. */
export interface PipelineRunPlaces {
  /** The config to start from (the shipped config.yaml). */
  readonly baseConfig: string;
  readonly dir: string;
  readonly bootstrap: string;
  readonly clickhousePort: number;
  readonly database: string;
  /**
   * `pass-all`: every inspector passes every batch on (NoInspector), so that every line the prefilter
   * keeps reaches a detector; `shipped`: the configured inspectors.
   */
  readonly inspectors: 'shipped' | 'pass-all';
}

/**
 * The config of one run: the base config pointed at the run's Kafka, ClickHouse database, state and
 * alert file, with batch timeouts and session timeouts short enough that a run of a few minutes
 * sees its batches leave and a killed stage's partitions move within seconds.
 */
export function writePipelineConfig(p: PipelineRunPlaces): { path: string; config: HamstringConfig } {
  mkdirSync(p.dir, { recursive: true });
  const tree = parseYaml(readFileSync(p.baseConfig, 'utf8')) as Tree;
  const pipeline = section(tree, 'pipeline');
  const collection = section(pipeline, 'log_collection');
  section(collection, 'default_batch_handler_config').batch_timeout = 1;
  section(pipeline, 'alerting').log_file_path = join(p.dir, 'alerts.jsonl');
  if (p.inspectors === 'pass-all')
    for (const inspector of pipeline.data_inspection as Tree[]) {
      inspector.inspector_module_name = 'no_inspector';
      inspector.inspector_class_name = 'NoInspector';
    }
  const environment = section(tree, 'environment');
  environment.kafka_bootstrap_servers = p.bootstrap;
  const server = section(section(environment, 'monitoring'), 'clickhouse_server');
  server.port = p.clickhousePort;
  server.database = p.database;
  environment.kafka_consumer = {
    ...section(environment, 'kafka_consumer'),
    session_timeout_ms: 6_000,
    heartbeat_interval_ms: 1_000,
  };
  tree.runtime = { ...(tree.runtime as Tree | undefined), state: { dir: join(p.dir, 'state') } };
  const path = join(p.dir, 'config.yaml');
  writeFileSync(path, toYaml(tree));
  return { path, config: loadConfig({ path }) };
}
