import { createAdmin } from '../kafka/admin.ts';
import { openChangelogReader } from '../kafka/changelog-reader.ts';
import type { TopicPartitionOffset } from '../kafka/records.ts';
import { MONITORING_TOPIC_PREFIX } from './events.ts';
import { TABLES } from './tables.ts';

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
  /**
   * Partitions short of their end: when drained, those whose committed offset stood still for
   * `quietMs` (their tail is an aborted transaction, whose rows no read_committed consumer gets).
   */
  behind: PartitionProgress[];
  waitedMs: number;
}

/**
 * Tells when the partitions behind stopped moving: the same partitions at the same committed
 * offsets for `quietMs`. With the stages stopped nothing new arrives, and the agent commits every
 * batch it reads within its batch timeout, so a partition that stays behind that long ends in
 * rows it will never get: a transaction a stopping stage aborted.
 */
export class QuietWatch {
  #key: string | undefined;
  #since = 0;

  constructor(private readonly quietMs: number) {}

  /** Starts the quiet spell over. */
  reset(): void {
    this.#key = undefined;
  }

  /** True once `behind` has been the same for `quietMs`. */
  quiet(behind: readonly PartitionProgress[], now: number): boolean {
    const key = behind.map((p) => `${p.topic}\u0000${p.partition}\u0000${p.committed}`).join('\n');
    if (key !== this.#key) {
      this.#key = key;
      this.#since = now;
      return false;
    }
    return now - this.#since >= this.quietMs;
  }
}

/**
 * Waits until the monitoring agent's group has committed every monitoring row written so far, so
 * that ClickHouse holds them; call it after the stages stopped. A partition ending in an aborted
 * transaction (a stage stopped mid-batch) never reaches its end: it counts as drained once it
 * stood still for `quietMs` (see {@link QuietWatch}) and a read_committed read of its tail finds no
 * row (an agent busy inserting a large batch stands still too, with rows left). Gives up at
 * `timeoutMs` or when `signal` aborts.
 */
export async function drainMonitoringAgent(o: {
  bootstrap: string;
  /** Default `monitoring.agent`, the agent's default group. */
  groupId?: string;
  topicPrefix?: string;
  timeoutMs: number;
  /** Default 8000 ms: a few of the agent's batch timeouts (2 s in the shipped config). */
  quietMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}): Promise<DrainResult> {
  const topics = TABLES.map((t) => `${o.topicPrefix ?? MONITORING_TOPIC_PREFIX}${t.name}`);
  const admin = createAdmin(o.bootstrap, 'hamstring-agent-drain');
  const began = Date.now();
  const watch = new QuietWatch(o.quietMs ?? 8000);
  let behind: PartitionProgress[] = [];
  try {
    for (;;) {
      behind = partitionsBehind(await progressOf(admin, o.groupId ?? 'monitoring.agent', topics));
      if (behind.length === 0) return { drained: true, behind, waitedMs: Date.now() - began };
      // Standing still is not enough: an agent inserting a large batch into ClickHouse commits
      // nothing for a while either. Only a tail with no committed row left is done.
      if (watch.quiet(behind, Date.now())) {
        if (await onlyAbortedTails(o.bootstrap, behind))
          return { drained: true, behind, waitedMs: Date.now() - began };
        watch.reset();
      }
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

/** How long the check of the tails may read: a partition still in an open transaction never ends. */
const TAIL_READ_MS = 5_000;

/**
 * Whether every partition behind holds nothing a read_committed consumer gets between the group's
 * committed offset and its end: its tail is aborted rows and markers, never to be copied. A tail
 * that still holds committed rows (the agent not done with them) or cannot be read to its end in
 * time (a transaction still open) is not.
 */
export async function onlyAbortedTails(
  bootstrap: string,
  behind: readonly PartitionProgress[],
): Promise<boolean> {
  const reader = await openChangelogReader({
    bootstrapServers: bootstrap,
    clientId: 'hamstring-agent-drain-tail',
    timeoutMs: TAIL_READ_MS,
  });
  let rows = 0;
  try {
    await reader.read(
      behind.map((p) => ({
        topic: p.topic,
        partition: p.partition,
        from: Math.max(p.committed, p.low),
        until: p.high,
      })),
      (records) => (rows += records.length),
      AbortSignal.timeout(TAIL_READ_MS),
    );
    return rows === 0;
  } catch {
    return false;
  } finally {
    await reader.close();
  }
}
