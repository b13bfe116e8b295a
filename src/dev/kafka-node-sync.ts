import type { PartitionState } from '../kafka/readiness.ts';

/**
 * When a restarted node counts as back: the partitions still lagging for node `id` are those
 * without a leader, those it replicates but is not in sync for, and, once every other node is up,
 * any whose in-sync set is short of its replicas.
 */
export function laggingPartitions(
  partitions: readonly PartitionState[],
  id: number,
  othersUp: boolean,
): PartitionState[] {
  return partitions.filter(
    (p) =>
      p.leader < 0 ||
      (p.replicas.includes(id) && !p.isr.includes(id)) ||
      (othersUp && p.isr.length < p.replicas.length),
  );
}

/** The error of a node not back in sync: the first lagging partitions, or the last probe's error. */
export function notInSyncError(
  id: number,
  timeoutMs: number,
  lagging: readonly PartitionState[],
  error: unknown,
): Error {
  const detail =
    lagging.length > 0
      ? `lagging partitions: ${lagging
          .slice(0, 5)
          .map((p) => `${p.topic}-${p.partition} (leader ${p.leader}, isr ${p.isr.join('/')})`)
          .join(', ')}`
      : `last error: ${error instanceof Error ? error.message : String(error)}`;
  return new Error(`Kafka node ${id} not back in sync within ${timeoutMs} ms; ${detail}`);
}
