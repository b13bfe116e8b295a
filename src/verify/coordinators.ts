import { describePartitions } from '../kafka/readiness.ts';

/** Java's String.hashCode (UTF-16 code units, 32-bit overflow), as Kafka uses it to place coordinators. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i += 1) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Math.abs, but Integer.MIN_VALUE maps to 0. */
const kafkaAbs = (n: number): number => (n === -2147483648 ? 0 : Math.abs(n));

/** The partition of `__consumer_offsets` / `__transaction_state` that owns a group / transactional id. */
export function coordinatorPartition(id: string, partitions: number): number {
  return kafkaAbs(javaStringHash(id)) % partitions;
}

/**
 * The broker hosting each group's coordinator and each transactional id's coordinator: the leader
 * of the id's partition of `__consumer_offsets` / `__transaction_state` (Kafka's
 * GroupCoordinator / TransactionCoordinator placement). Ids whose internal topic does not exist
 * yet are left out.
 */
export async function findCoordinators(
  bootstrap: string,
  ids: { groups: readonly string[]; transactionalIds: readonly string[] },
): Promise<{ kind: 'group' | 'transaction'; id: string; node: number }[]> {
  const { partitions } = await describePartitions(bootstrap, 10_000);
  const locate = (topic: string, id: string): number | undefined => {
    const parts = partitions.filter((p) => p.topic === topic);
    if (parts.length === 0) return undefined;
    const p = coordinatorPartition(id, parts.length);
    return parts.find((x) => x.partition === p)?.leader;
  };
  const out: { kind: 'group' | 'transaction'; id: string; node: number }[] = [];
  for (const id of ids.groups) {
    const node = locate('__consumer_offsets', id);
    if (node !== undefined) out.push({ kind: 'group', id, node });
  }
  for (const id of ids.transactionalIds) {
    const node = locate('__transaction_state', id);
    if (node !== undefined) out.push({ kind: 'transaction', id, node });
  }
  return out;
}
