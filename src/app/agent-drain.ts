import { createAdmin } from '../kafka/admin.ts';
import type { TopicPartitionOffset } from '../kafka/records.ts';
import { MONITORING_TOPIC_PREFIX } from '../monitoring/events.ts';
import { TABLES } from '../monitoring/tables.ts';

/** A partition's offsets: the log's start and end, and the group's committed offset (negative: none). */
export interface PartitionProgress {
  topic: string;
  partition: number;
  low: number;
  high: number;
  committed: number;
}

/**
 * The partitions whose rows the agent has not all committed. Stages write monitoring rows in
 * transactions, and each transaction ends in a marker that takes an offset and is never consumed,
 * so a partition read to its end has `committed = high - 1` (or `high`). An empty partition is done.
 */
export function partitionsBehind(progress: readonly PartitionProgress[]): PartitionProgress[] {
  return progress.filter((p) => p.high > p.low && p.committed < p.high - 1);
}

export interface DrainResult {
  drained: boolean;
  /** Partitions still behind at the end (none when drained). */
  behind: PartitionProgress[];
  waitedMs: number;
}

/**
 * Waits until the monitoring agent's group has committed every monitoring row written so far, so
 * that ClickHouse holds them; call it after the stages stopped. Gives up at `timeoutMs` or when
 * `signal` aborts: a partition whose last transaction was aborted ends in rows that are never
 * consumed, so its committed offset stays short of the end and only the deadline ends the wait.
 */
export async function drainMonitoringAgent(o: {
  bootstrap: string;
  /** Default `monitoring.agent`, the agent's default group. */
  groupId?: string;
  topicPrefix?: string;
  timeoutMs: number;
  pollMs?: number;
  signal?: AbortSignal;
}): Promise<DrainResult> {
  const topics = TABLES.map((t) => `${o.topicPrefix ?? MONITORING_TOPIC_PREFIX}${t.name}`);
  const admin = createAdmin(o.bootstrap, 'hamstring-agent-drain');
  const began = Date.now();
  let behind: PartitionProgress[] = [];
  try {
    for (;;) {
      behind = partitionsBehind(await progressOf(admin, o.groupId ?? 'monitoring.agent', topics));
      if (behind.length === 0) return { drained: true, behind, waitedMs: Date.now() - began };
      if (Date.now() - began >= o.timeoutMs || o.signal?.aborted === true) break;
      await new Promise((resolve) => setTimeout(resolve, o.pollMs ?? 500));
    }
  } finally {
    admin.close();
  }
  return { drained: false, behind, waitedMs: Date.now() - began };
}

async function progressOf(
  admin: ReturnType<typeof createAdmin>,
  groupId: string,
  topics: readonly string[],
): Promise<PartitionProgress[]> {
  const committed = new Map<string, number>(
    (await admin.groupOffsets(groupId, [...topics])).map((c: TopicPartitionOffset) => [
      `${c.topic}\u0000${c.partition}`,
      c.offset,
    ]),
  );
  const out: PartitionProgress[] = [];
  for (const topic of topics)
    for (const w of await admin.watermarks(topic))
      out.push({
        topic,
        partition: w.partition,
        low: w.low,
        high: w.high,
        committed: committed.get(`${topic}\u0000${w.partition}`) ?? -1,
      });
  return out;
}
