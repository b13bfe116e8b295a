import { librdkafkaDebugContexts } from './debug-log.ts';
import { STATS_INTERVAL_MS } from './stranded-client.ts';
import { connectionProperties } from './security.ts';

/** Settings the runtime passes down to librdkafka, already resolved from config.yaml and env. */
export interface KafkaClientSettings {
  bootstrapServers: string;
  clientId: string;
  /**
   * How often the client refreshes topic metadata (`topic.metadata.refresh.interval.ms`): bounds how
   * long partitions added to a subscribed topic stay unconsumed, and how soon a deleted output topic
   * is noticed. Default DEFAULT_METADATA_REFRESH_INTERVAL_MS.
   */
  metadataRefreshIntervalMs?: number;
  /** Extra librdkafka properties, last word (tests and advanced users). */
  overrides?: Record<string, string | number | boolean>;
}

export interface ConsumerSettings extends KafkaClientSettings {
  groupId: string;
  groupProtocol: 'classic' | 'consumer';
  /** classic protocol only; the consumer protocol assigns on the broker. */
  assignmentStrategy: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxPollIntervalMs: number;
  isolation: 'read_committed' | 'read_uncommitted';
  autoOffsetReset: 'earliest' | 'latest';
}

export interface ProducerSettings extends KafkaClientSettings {
  /** Set for the transactional producer; absent for the idempotent at-least-once producer. */
  transactionalId?: string;
  transactionTimeoutMs: number;
  /**
   * Highest transaction protocol version (default 2). Version 2 (KIP-890) needs neither
   * AddPartitionsToTxn nor AddOffsetsToTxn and bumps the epoch at every transaction end; the patched
   * client uses it only where the cluster's transaction.version feature is 2 or more.
   */
  transactionVersion?: 1 | 2;
  messageTimeoutMs: number;
  /** Bound of every native transactional call (init, send-offsets, commit, abort). */
  apiTimeoutMs: number;
}

type Props = Record<string, string | number | boolean>;

/**
 * librdkafka refreshes metadata every 300 s by default, so partitions added to an input topic stayed
 * unassigned for minutes while producers wrote to them. A few seconds costs one small Metadata
 * request per client and interval (for the subscribed topics only, `topic.metadata.refresh.sparse`).
 */
export const DEFAULT_METADATA_REFRESH_INTERVAL_MS = 5_000;
/** The transaction protocol version a producer asks for unless told otherwise. */
export const DEFAULT_TRANSACTION_VERSION = 2;

const metadataRefresh = (s: KafkaClientSettings): Props => ({
  'topic.metadata.refresh.interval.ms': s.metadataRefreshIntervalMs ?? DEFAULT_METADATA_REFRESH_INTERVAL_MS,
});

export function consumerProperties(s: ConsumerSettings): Props {
  const props: Props = {
    ...connectionProperties(s.bootstrapServers, s.clientId),
    'group.id': s.groupId,
    'group.protocol': s.groupProtocol,
    'max.poll.interval.ms': s.maxPollIntervalMs,
    'isolation.level': s.isolation,
    'enable.auto.commit': false,
    // Offsets are committed only through the transaction (or explicitly in at-least-once mode).
    'enable.auto.offset.store': false,
    'auto.offset.reset': s.autoOffsetReset,
    'enable.partition.eof': false,
    // librdkafka prefetches up to 100k messages / 64 MB by default; a transaction batch needs far
    // less, and the bound keeps a worker's memory predictable (bench: RSS under 200 MB at 1 KB).
    'queued.min.messages': 10_000,
    'queued.max.messages.kbytes': 16_384,
    // A partition whose prefetch queue is full is not fetched again for this long. librdkafka's
    // 1000 ms left a worker starving at 1 KB once it had drained the queue in a fraction of that
    // (bench:compare at 1 KB, paired runs: exactly-once +20%, at-least-once +55%, batches full again); a
    // re-check costs nothing.
    'fetch.queue.backoff.ms': 10,
    'allow.auto.create.topics': false,
    'socket.connection.setup.timeout.ms': 10_000,
    'reconnect.backoff.max.ms': 2_000,
  };
  // With KIP-848 the broker owns these; librdkafka rejects them for group.protocol=consumer.
  if (s.groupProtocol === 'classic') {
    props['partition.assignment.strategy'] = s.assignmentStrategy;
    props['session.timeout.ms'] = s.sessionTimeoutMs;
    props['heartbeat.interval.ms'] = s.heartbeatIntervalMs;
  }
  return { ...props, ...metadataRefresh(s), ...clientDiagnostics(), ...s.overrides };
}

/**
 * Properties every client the runtime makes carries: statistics for the stranded-client watch
 * (stranded-client.ts) and librdkafka's debug contexts when HAMSTRING_KAFKA_DEBUG asks for them.
 */
export function clientDiagnostics(): Props {
  const contexts = librdkafkaDebugContexts();
  return {
    'statistics.interval.ms': STATS_INTERVAL_MS,
    ...(contexts === undefined ? {} : { debug: contexts }),
  };
}

export function producerProperties(s: ProducerSettings): Props {
  const props: Props = {
    ...connectionProperties(s.bootstrapServers, s.clientId),
    'enable.idempotence': true,
    acks: 'all',
    'message.timeout.ms': s.messageTimeoutMs,
    'linger.ms': 5,
    // The Java client's partitioning (murmur2 of the key; librdkafka's default is CRC-32), so a key
    // lands where a Java or Kafka Streams application writing the same topic puts it, as
    // co-partitioned joins with them need; unkeyed records stay spread at random.
    partitioner: 'murmur2_random',
    dr_cb: true,
    'socket.connection.setup.timeout.ms': 10_000,
    'reconnect.backoff.max.ms': 2_000,
  };
  if (s.transactionalId !== undefined) {
    props['transactional.id'] = s.transactionalId;
    props['transaction.timeout.ms'] = s.transactionTimeoutMs;
    props['transaction.version'] = s.transactionVersion ?? DEFAULT_TRANSACTION_VERSION;
    // Right after a commit the coordinator is still writing markers and answers the next
    // AddPartitions/AddOffsets (version 1) or a first TxnOffsetCommit (version 2) with
    // CONCURRENT_TRANSACTIONS; librdkafka's default 100 ms retry back-off then dominates every
    // transaction (the Java client shortened it for the same reason, KAFKA-5477). Later retries
    // still grow up to retry.backoff.max.ms.
    props['retry.backoff.ms'] = 2;
  }
  return { ...props, ...metadataRefresh(s), ...clientDiagnostics(), ...s.overrides };
}
