import { PLAINTEXT_SECURITY } from '../config/index.ts';
import { describePartitions, type PartitionState } from '../kafka/readiness.ts';
import { AbortPoll, pollUntil } from './poll.ts';

/** Polls in a row (500 ms apart) a restarted node must be in sync on before startNode returns. */
const SETTLED_POLLS = 3;

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

/**
 * Resolves once node `id` is in sync ({@link laggingPartitions}) on SETTLED_POLLS polls in a row, not
 * once: each poll's metadata may come from another broker, and one whose cache has not yet applied
 * the ISR change (CI saw that under load) would show the node lagging right after this returned.
 * `exited` names the error when the node's process is gone; `othersUp` whether every other node runs.
 */
export async function waitNodeInSync(o: {
  bootstrapServers: string;
  id: number;
  timeoutMs: number;
  exited: () => Error | undefined;
  othersUp: () => boolean;
}): Promise<void> {
  let last: PartitionState[] = [];
  let settled = 0;
  await pollUntil(
    async () => {
      const exited = o.exited();
      if (exited) throw new AbortPoll(exited);
      const { brokers, partitions } = await describePartitions(o.bootstrapServers, 5000, PLAINTEXT_SECURITY);
      last = laggingPartitions(partitions, o.id, o.othersUp());
      settled = brokers.includes(o.id) && last.length === 0 ? settled + 1 : 0;
      return settled >= SETTLED_POLLS;
    },
    {
      timeoutMs: o.timeoutMs,
      intervalMs: 500,
      onTimeout: (error) => notInSyncError(o.id, o.timeoutMs, last, error),
    },
  );
}
