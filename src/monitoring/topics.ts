import { createAdmin } from '../kafka/admin.ts';
import { MONITORING_TOPIC_PREFIX } from './events.ts';
import { TABLES, type TableDef } from './tables.ts';

export interface MonitoringTopicsOptions {
  /** Default `clickhouse_`. */
  topicPrefix?: string;
  /** Default: every monitoring table. */
  tables?: readonly TableDef[];
  /** Default `<prefix>dlt`. */
  deadLetterTopic?: string;
  /** Partitions of topics that do not exist yet (existing topics are left as they are). Default 3. */
  partitions?: number;
  /** Default -1: the broker's default.replication.factor. */
  replicationFactor?: number;
}

/** The topics' prefix, the topics the agent consumes (`<prefix><table>`) and its dead-letter topic. */
export function monitoringTopicNames(
  o: Pick<MonitoringTopicsOptions, 'topicPrefix' | 'tables' | 'deadLetterTopic'> = {},
): { prefix: string; inputs: string[]; deadLetterTopic: string } {
  const prefix = o.topicPrefix ?? MONITORING_TOPIC_PREFIX;
  return {
    prefix,
    inputs: (o.tables ?? TABLES).map((t) => `${prefix}${t.name}`),
    deadLetterTopic: o.deadLetterTopic ?? `${prefix}dlt`,
  };
}

/** The topics the agent consumes and its dead-letter topic, in one list. */
export function monitoringTopics(o: MonitoringTopicsOptions = {}): string[] {
  const names = monitoringTopicNames(o);
  return [...names.inputs, names.deadLetterTopic];
}

/**
 * Creates the monitoring topics that are missing (an existing topic is not an error and is not
 * changed). The agent itself never creates topics: a stage producing rows to a topic that does not
 * exist yet should fail visibly rather than auto-create it with broker defaults.
 */
export async function ensureMonitoringTopics(
  bootstrapServers: string,
  o: MonitoringTopicsOptions = {},
): Promise<string[]> {
  const topics = monitoringTopics(o);
  const admin = createAdmin(bootstrapServers, 'hamstring-monitoring-admin');
  try {
    await admin.createTopics(
      topics.map((topic) => ({
        topic,
        partitions: o.partitions ?? 3,
        replicationFactor: o.replicationFactor ?? -1,
      })),
    );
  } finally {
    admin.close();
  }
  return topics;
}
