import { silentLogger } from '../observability/logger.ts';
import { createConsumer, type ConsumerPort } from './consumer.ts';

/**
 * A consumer that reads topics from the start with read_committed and never commits: the checking
 * side of exactly-once (verifier, tests, benchmarks). Its group is its own unless `groupId` is given,
 * so it never disturbs (or resumes from) anybody's offsets.
 */
export function createReadCommittedReader(o: {
  bootstrap: string;
  clientId: string;
  groupId?: string;
  sessionTimeoutMs?: number;
}): ConsumerPort {
  return createConsumer(
    {
      bootstrapServers: o.bootstrap,
      clientId: o.clientId,
      groupId: o.groupId ?? `${o.clientId}-${process.pid}-${Math.random().toString(36).slice(2)}`,
      groupProtocol: 'classic',
      assignmentStrategy: 'range',
      sessionTimeoutMs: o.sessionTimeoutMs ?? 10_000,
      heartbeatIntervalMs: 1_000,
      maxPollIntervalMs: 300_000,
      isolation: 'read_committed',
      autoOffsetReset: 'earliest',
    },
    { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
    () => undefined,
    silentLogger(),
  );
}
