import type { AdminPort } from '../kafka/admin.ts';
import { tpKey } from '../kafka/records.ts';

/**
 * What the runtime compares to see whether every partition of its subscribed topics has an owner:
 * the topics' partition counts from the cluster's metadata, and the group's current assignment.
 */
export interface GroupCoveragePort {
  /** Partition count per topic; a topic that does not exist is absent. */
  partitionCounts(topics: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** `tpKey` (`topic:partition`) of every partition some member of the group owns. */
  ownedPartitions(groupId: string): Promise<string[]>;
}

/** The port over the Admin API (metadata and DescribeGroups). */
export function adminGroupCoverage(admin: AdminPort, timeoutMs: number): GroupCoveragePort {
  return {
    partitionCounts: (topics) => admin.partitionCounts(topics, timeoutMs),
    async ownedPartitions(groupId) {
      const group = await admin.describeGroup(groupId, timeoutMs);
      return group.members.flatMap((m) => m.partitions.map(tpKey));
    },
  };
}

/** Every partition of `topics` and the owned ones, as `tpKey`s, for AlertConditions.coverage. */
export async function observeCoverage(
  port: GroupCoveragePort,
  groupId: string,
  topics: readonly string[],
): Promise<{ expected: string[]; owned: string[] }> {
  const [counts, owned] = await Promise.all([port.partitionCounts(topics), port.ownedPartitions(groupId)]);
  const expected = [...counts].flatMap(([topic, n]) =>
    Array.from({ length: n }, (_, partition) => tpKey({ topic, partition })),
  );
  return { expected, owned };
}
