import { createAdmin, type AdminPort } from '../kafka/admin.ts';
import { KafkaError } from '../kafka/kafka-error.ts';
import { systemClock } from '../runtime/clock.ts';
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

/** Waits between attempts while Kafka cannot be reached: doubling from the first, up to 15 s. */
const MAX_WAIT_MS = 15_000;
const CREATE_TIMEOUT_MS = 30_000;

/** What {@link ensureMonitoringTopics} needs besides the topics: its admin, and how to wait. */
export interface EnsureTopicsWaiting {
  /** Told each time Kafka could not be reached, with the wait before the next attempt. */
  onWait?: (err: KafkaError, delayMs: number) => void;
  /** Ends the waiting (SIGTERM): the call then rejects with the last error. */
  signal?: AbortSignal;
  /** First wait (ms); default 1,000. */
  firstWaitMs?: number;
  /** Default createAdmin on the bootstrap servers (tests pass a fake). */
  admin?: AdminPort;
}

/**
 * Creates the monitoring topics that are missing (an existing topic is not an error and is not
 * changed). The agent itself never creates topics: a stage producing rows to a topic that does not
 * exist yet should fail visibly rather than auto-create it with broker defaults.
 *
 * While Kafka cannot be reached (a transport or retriable error) it waits and tries again, telling
 * `onWait` each time, for as long as the outage lasts: an agent started (or restarted) while the
 * broker is down must wait for it, not exit. It gave up after one 30 s attempt before, and a
 * verification run's agent, killed and restarted shortly before a broker kill that lasted 39 s on a
 * loaded machine, exited with code 1 and left 48,249 monitoring rows uncopied. Any other error is
 * thrown at once.
 */
export async function ensureMonitoringTopics(
  bootstrapServers: string,
  o: MonitoringTopicsOptions & EnsureTopicsWaiting = {},
): Promise<string[]> {
  const topics = monitoringTopics(o);
  const admin = o.admin ?? createAdmin(bootstrapServers, 'hamstring-monitoring-admin');
  try {
    for (let wait = o.firstWaitMs ?? 1_000; ; wait = Math.min(MAX_WAIT_MS, wait * 2)) {
      try {
        await admin.createTopics(
          topics.map((topic) => ({
            topic,
            partitions: o.partitions ?? 3,
            replicationFactor: o.replicationFactor ?? -1,
          })),
          CREATE_TIMEOUT_MS,
        );
        return topics;
      } catch (e) {
        const transient = e instanceof KafkaError && (e.kind === 'transport' || e.kind === 'retriable');
        if (!transient || o.signal?.aborted === true) throw e;
        o.onWait?.(e, wait);
        await systemClock.sleep(wait, o.signal);
      }
    }
  } finally {
    admin.close();
  }
}
