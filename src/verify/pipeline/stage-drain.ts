/**
 * The end of a verification run: every stage group has committed its inputs to their end and stays
 * there. Idle topics are no such proof: a stage killed shortly before the end may still be starting
 * while nothing grows, and the lines it has not read yet would look lost. So the settle step waits
 * until each stage's group has a member (its process up and in the group, the group not rebalancing)
 * and no record of its inputs left, for longer than any timer of the run (a collector holding lines
 * in its buffer sends them on its batch timeout, which makes the next group fall behind again).
 *
 * The decision ({@link laggingGroups}, {@link SettleWatch}) is pure; {@link waitStagesDrained} reads the
 * offsets and asks it. A partition that stays behind by the same records may end in an aborted
 * transaction (its rows never delivered to a read_committed consumer): it counts as read once a read
 * of its tail finds no committed row, as the monitoring agent's drain does.
 */
import type { AdminPort } from '../../kafka/admin.ts';
import { onlyAbortedTails, QuietWatch, type PartitionProgress } from '../../monitoring/agent-drain.ts';

/** A stage's group at one look: its members, its state, and its offsets on each input partition. */
export interface GroupProgress {
  readonly label: string;
  readonly group: string;
  /** `Stable`, `PreparingRebalance`, `Empty`, ... (`Unknown` when it could not be read). */
  readonly state: string;
  readonly members: number;
  readonly partitions: readonly PartitionProgress[];
}

/** A group short of the end: why, and by how many records on which partitions. */
export interface LaggingGroup {
  readonly label: string;
  readonly group: string;
  /** Set when the group has no member or is rebalancing: its process is down or still starting. */
  readonly inactive?: string;
  readonly behind: readonly {
    readonly topic: string;
    readonly partition: number;
    readonly records: number;
  }[];
}

/**
 * Records of a partition a group has not committed. A topic the stages write ends in the marker of
 * its last transaction, which takes an offset and is never consumed, so its end is `high - 1`; a
 * `plain` topic (the feed's, written without transactions) ends at `high`. An empty partition is done.
 */
export function recordsBehind(p: PartitionProgress, plain: boolean): number {
  if (p.high <= p.low) return 0;
  const end = plain ? p.high : p.high - 1;
  return Math.max(0, end - Math.max(p.committed, p.low));
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * The groups not at their end: without a member, not `Stable`, or with records left on a partition
 * (unless that partition's tail at exactly these offsets is known to be aborted rows only).
 */
export function laggingGroups(
  groups: readonly GroupProgress[],
  plainTopics: ReadonlySet<string>,
  abortedTails: ReadonlyMap<string, { committed: number; high: number }> = new Map(),
): LaggingGroup[] {
  const out: LaggingGroup[] = [];
  for (const g of groups) {
    const behind = g.partitions
      .filter((p) => {
        const aborted = abortedTails.get(key(p.topic, p.partition));
        return !(aborted && aborted.committed === p.committed && aborted.high === p.high);
      })
      .map((p) => ({
        topic: p.topic,
        partition: p.partition,
        records: recordsBehind(p, plainTopics.has(p.topic)),
      }))
      .filter((p) => p.records > 0);
    const inactive = g.state !== 'Stable' ? `group ${g.state}` : g.members === 0 ? 'no member' : undefined;
    if (behind.length > 0 || inactive !== undefined)
      out.push({ label: g.label, group: g.group, behind, ...(inactive ? { inactive } : {}) });
  }
  return out;
}

/** True once no group has lagged for `stayMs` in a row; any lagging look starts the wait over. */
export class SettleWatch {
  #since: number | undefined;

  constructor(private readonly stayMs: number) {}

  settled(lagging: readonly LaggingGroup[], now: number): boolean {
    if (lagging.length > 0) {
      this.#since = undefined;
      return false;
    }
    this.#since ??= now;
    return now - this.#since >= this.stayMs;
  }
}

/** How the report names the groups behind: `collector (hamstring-collector): no member; t:0 12 records`. */
export function describeLagging(lagging: readonly LaggingGroup[]): string[] {
  return lagging.map((g) => {
    const parts = [
      ...(g.inactive ? [g.inactive] : []),
      ...g.behind.map((b) => `${b.topic}:${b.partition} ${b.records} records behind`),
    ];
    return `${g.label} (${g.group}): ${parts.join(', ')}`;
  });
}

export interface StageDrainOptions {
  readonly admin: AdminPort;
  readonly bootstrap: string;
  readonly groups: ReadonlyMap<string, { readonly group: string; readonly topics: readonly string[] }>;
  /** Topics written without transactions (the feed's input topic). */
  readonly plainTopics: ReadonlySet<string>;
  readonly stayMs: number;
  readonly timeoutMs: number;
  /** How long a partition stays behind by the same records before its tail is read for rows. */
  readonly quietMs?: number;
  readonly pollMs?: number;
}

export interface StageDrainResult {
  readonly drained: boolean;
  /** At the timeout: the groups still behind, as {@link describeLagging} names them. */
  readonly behind: readonly string[];
  readonly waitedMs: number;
}

/** Waits until every stage group reached the end of its inputs and stayed there `stayMs`. */
export async function waitStagesDrained(o: StageDrainOptions): Promise<StageDrainResult> {
  const began = Date.now();
  const settle = new SettleWatch(o.stayMs);
  const still = new QuietWatch(o.quietMs ?? 8_000);
  const abortedTails = new Map<string, { committed: number; high: number }>();
  let lagging: LaggingGroup[] = [];
  for (;;) {
    const progress = await Promise.all(
      [...o.groups].map(([label, g]) => groupProgress(o.admin, label, g.group, g.topics)),
    );
    lagging = laggingGroups(progress, o.plainTopics, abortedTails);
    const now = Date.now();
    if (settle.settled(lagging, now)) return { drained: true, behind: [], waitedMs: now - began };
    const behindParts = progress
      .flatMap((g) => g.partitions)
      .filter((p) => recordsBehind(p, o.plainTopics.has(p.topic)) > 0);
    if (
      lagging.every((g) => g.inactive === undefined) &&
      behindParts.length > 0 &&
      still.quiet(behindParts, now)
    ) {
      if (await onlyAbortedTails(o.bootstrap, behindParts))
        for (const p of behindParts)
          abortedTails.set(key(p.topic, p.partition), { committed: p.committed, high: p.high });
      still.reset();
    }
    if (now - began >= o.timeoutMs) break;
    await new Promise((r) => setTimeout(r, o.pollMs ?? 500));
  }
  return { drained: false, behind: describeLagging(lagging), waitedMs: Date.now() - began };
}

/** One look at a group; a broker that cannot answer (restarting) makes it `Unknown`, hence lagging. */
async function groupProgress(
  admin: AdminPort,
  label: string,
  group: string,
  topics: readonly string[],
): Promise<GroupProgress> {
  try {
    const [description, committed] = await Promise.all([
      admin.describeGroup(group, 10_000),
      admin.groupOffsets(group, [...topics], 10_000),
    ]);
    const at = new Map(committed.map((c) => [key(c.topic, c.partition), c.offset]));
    const partitions: PartitionProgress[] = [];
    for (const topic of topics)
      for (const w of await admin.watermarks(topic, 10_000))
        partitions.push({ topic, ...w, committed: at.get(key(topic, w.partition)) ?? -1 });
    return { label, group, state: description.state, members: description.members.length, partitions };
  } catch (e) {
    return { label, group, state: `Unknown (${String(e)})`, members: 0, partitions: [] };
  }
}
