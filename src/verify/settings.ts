import type { WorkerKafkaOptions } from '../runtime/worker-options.ts';

/**
 * Worker Kafka options of verification runs: short timeouts so that faults resolve within a
 * scenario (a dead member is noticed in 6 s, a hung transaction aborted after 30 s).
 */
export function verifyKafkaOptions(
  bootstrapServers: string,
  over: Partial<WorkerKafkaOptions> = {},
): WorkerKafkaOptions {
  return {
    bootstrapServers,
    groupProtocol: 'classic',
    assignmentStrategy: 'cooperative-sticky',
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 1_000,
    maxPollIntervalMs: 30_000,
    transactionTimeoutMs: 30_000,
    messageTimeoutMs: 20_000,
    apiTimeoutMs: 10_000,
    commitRetryTimeoutMs: 10_000,
    ...over,
  };
}
