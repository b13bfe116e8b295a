import type { HamstringConfig } from '../config/index.ts';
import { monitoringTopic } from '../monitoring/events.ts';
import type { TableName } from '../monitoring/tables.ts';

type Prefixes = HamstringConfig['environment']['kafka_topics_prefix']['pipeline'];

/**
 * Topic names of the pipeline hops, `<prefix>-<target name>` as in the Python system: the prefix
 * names the hop, the suffix the component that consumes it.
 */
export function pipelineTopic(config: HamstringConfig, hop: keyof Prefixes, target: string): string {
  return `${config.environment.kafka_topics_prefix.pipeline[hop]}-${target}`;
}

/** The `clickhouse_<table>` topics a stage writes monitoring rows to. */
export function monitoringTopics(tables: readonly TableName[], prefix?: string): string[] {
  return tables.map((table) => monitoringTopic(table, prefix));
}

/**
 * The consumer group of one configured component (`log_collection.collector-dga_collector`). A
 * stage's name is its kind, shared by every component of that kind, and the runtime derives the
 * group and the changelog topics (`<group>-<store>-changelog`) from the group id: two collectors in
 * one group would share their stores' changelogs. The logserver has one component: its stage name.
 */
export function componentGroupId(stageName: string, componentName?: string): string {
  return componentName === undefined ? stageName : `${stageName}-${componentName}`;
}
