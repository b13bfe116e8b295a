import type { ConsumerSettings } from '../../src/kafka/client-config.ts';

/**
 * Settings of a test's group consumer: classic protocol, cooperative-sticky, short session,
 * read_committed from the earliest offset.
 */
export function testConsumerSettings(
  bootstrapServers: string,
  clientId: string,
  groupId: string,
): ConsumerSettings {
  return {
    bootstrapServers,
    clientId,
    groupId,
    groupProtocol: 'classic',
    assignmentStrategy: 'cooperative-sticky',
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 1_000,
    maxPollIntervalMs: 30_000,
    isolation: 'read_committed',
    autoOffsetReset: 'earliest',
  };
}
