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

/** The topics the agent consumes (`<prefix><table>`) and its dead-letter topic. */
export function monitoringTopics(o: MonitoringTopicsOptions = {}): string[] {
  const prefix = o.topicPrefix ?? MONITORING_TOPIC_PREFIX;
  return [...(o.tables ?? TABLES).map((t) => `${prefix}${t.name}`), o.deadLetterTopic ?? `${prefix}dlt`];
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
