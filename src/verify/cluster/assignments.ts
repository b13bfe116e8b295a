import type { AdminPort } from '../../kafka/admin.ts';

/**
 * Who holds which partition of each stage's consumer group, sampled from group descriptions over a
 * run, and the times partitions took to move off a lost machine and back after its return. A
 * member's machine comes from its client id: the runtime names its consumer
 * `<stage>-<instance id>-consumer-<n>`, and the simulated pipeline's instance ids start with the
 * machine (`m2-collector-dga_collector-i1`).
 */

/** A stage's consumer group and the input topics whose partitions it shares out. */
export interface WatchedGroup {
  /** The stage process label without machine and instance (`collector dga_collector`). */
  readonly label: string;
  readonly group: string;
  readonly topics: readonly string[];
}

/** One description of one group: partition (`topic:partition`) to the machine holding it. */
export interface GroupSnapshot {
  readonly atMs: number;
  readonly group: string;
  readonly state: string;
  readonly owners: ReadonlyMap<string, string>;
  /** Members per machine. */
  readonly members: ReadonlyMap<string, number>;
  /** Node id of the group's coordinator (a machine's index in the simulated cluster). */
  readonly coordinator: number | undefined;
}

/** The machine of a member, from its client id; undefined when it names none. */
export function machineOfClient(clientId: string): string | undefined {
  return /(?:^|-)(m\d+)-/.exec(clientId)?.[1];
}

/** Describes `g` now; rejects while the group cannot be described (its coordinator moving). */
export async function describeOwners(admin: AdminPort, g: WatchedGroup): Promise<GroupSnapshot> {
  const state = await admin.describeGroup(g.group, 3000);
  const topics = new Set(g.topics);
  const owners = new Map<string, string>();
  const members = new Map<string, number>();
  for (const m of state.members) {
    const machine = machineOfClient(m.clientId) ?? m.clientId;
    members.set(machine, (members.get(machine) ?? 0) + 1);
    for (const p of m.partitions) if (topics.has(p.topic)) owners.set(`${p.topic}:${p.partition}`, machine);
  }
  return {
    atMs: Date.now(),
    group: g.group,
    state: state.state,
    owners,
    members,
    coordinator: state.coordinator,
  };
}

/** {@link describeOwners}, undefined when it fails. */
export async function snapshotGroup(admin: AdminPort, g: WatchedGroup): Promise<GroupSnapshot | undefined> {
  return describeOwners(admin, g).catch(() => undefined);
}

/**
 * Samples every group every `intervalMs` until {@link stop}; {@link snapshots} keeps them all. An
 * admin client whose description of a group failed is replaced before the next sample: one that
 * asked a coordinator on a machine cut off went on failing for that group after the coordinator
 * moved, and after the machine came back (448 failures in a row in a machine-loss run).
 */
export class AssignmentWatch {
  readonly snapshots: GroupSnapshot[] = [];
  /** Descriptions that failed, per group: a group never described after a cut shows here. */
  readonly failures = new Map<string, number>();
  /** The last failure of each group's description, for the report. */
  readonly lastError = new Map<string, string>();
  #running = true;
  readonly #done: Promise<void>;

  constructor(
    newAdmin: () => AdminPort,
    readonly groups: readonly WatchedGroup[],
    /** Partitions per group (every input topic together), to tell a full assignment. */
    readonly partitions: ReadonlyMap<string, number>,
    intervalMs = 500,
  ) {
    // A loop and an admin client per group: a description that waits out its timeout (a group
    // whose coordinator was on the machine cut off) delayed every other group's next sample in one
    // shared round, and their moves read 3 s late.
    this.#done = Promise.all(
      groups.map(async (g) => {
        let admin = newAdmin();
        while (this.#running) {
          try {
            this.snapshots.push(await describeOwners(admin, g));
          } catch (e) {
            this.failures.set(g.group, (this.failures.get(g.group) ?? 0) + 1);
            this.lastError.set(g.group, e instanceof Error ? e.message : String(e));
            admin.close();
            admin = newAdmin();
          }
          await new Promise((r) => setTimeout(r, intervalMs));
        }
        admin.close();
      }),
    ).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#done;
  }

  /** The coordinator of `group` by its last description before `atMs` that names one. */
  coordinatorAt(group: string, atMs: number): number | undefined {
    return this.snapshots.findLast((s) => s.group === group && s.atMs < atMs && s.coordinator !== undefined)
      ?.coordinator;
  }

  /** The latest snapshot of `group`. */
  latest(group: string): GroupSnapshot | undefined {
    return this.snapshots.findLast((s) => s.group === group);
  }

  /**
   * When, after `sinceMs`, every partition of `group` was first held by a machine other than
   * `machine` (a stable group, all partitions assigned); undefined when that never happened.
   */
  movedOffAt(group: string, machine: string, sinceMs: number): number | undefined {
    const n = this.partitions.get(group) ?? 0;
    return this.snapshots.find(
      (s) =>
        s.group === group &&
        s.atMs >= sinceMs &&
        s.state === 'Stable' &&
        s.owners.size === n &&
        [...s.owners.values()].every((m) => m !== machine),
    )?.atMs;
  }

  /** When, after `sinceMs`, `machine` first held a partition of `group` again in a stable group. */
  movedBackAt(group: string, machine: string, sinceMs: number): number | undefined {
    return this.snapshots.find(
      (s) =>
        s.group === group &&
        s.atMs >= sinceMs &&
        s.state === 'Stable' &&
        [...s.owners.values()].some((m) => m === machine),
    )?.atMs;
  }

  /** The latest snapshot of `group` as text: its state and partitions per machine. */
  describe(group: string): string {
    const s = this.latest(group);
    if (!s) return 'never described';
    const held = [...this.holdings(group)].map(([m, n]) => `${m} ${n}`).join(', ');
    const error = this.lastError.get(group);
    return `${s.state}, partitions ${held || 'none'}, ${this.failures.get(group) ?? 0} descriptions failed${error === undefined ? '' : ` (last: ${error})`}`;
  }

  /** Partitions each machine holds of `group` in its latest snapshot. */
  holdings(group: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const m of this.latest(group)?.owners.values() ?? []) counts.set(m, (counts.get(m) ?? 0) + 1);
    return counts;
  }
}

/** Partitions of each group's input topics together. */
export async function groupPartitions(
  admin: AdminPort,
  groups: readonly WatchedGroup[],
): Promise<Map<string, number>> {
  const counts = await admin.partitionCounts([...new Set(groups.flatMap((g) => g.topics))], 15_000);
  return new Map(groups.map((g) => [g.group, g.topics.reduce((n, t) => n + (counts.get(t) ?? 0), 0)]));
}
