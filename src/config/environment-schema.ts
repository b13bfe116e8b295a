import { z } from 'zod';
import { clickhouseServerSchema } from './clickhouse-schema.ts';
import { addProblem, asRecord, whenPositiveIntegers } from './refinements.ts';
import { kafkaSecuritySchema } from './kafka-security.ts';
import { recordErrorsSchema } from './record-errors-schema.ts';
import {
  bootstrapServerList,
  ipAddress,
  nonEmptyString,
  port,
  positiveInt,
  positiveNumber,
  stageName,
  topicName,
} from './value-schemas.ts';

const brokerSchema = z.strictObject({
  hostname: nonEmptyString(),
  internal_port: port(),
  external_port: port(),
  node_ip: ipAddress().optional(),
});

const topicPrefixesSchema = z.strictObject({
  logserver_in: topicName().default('hamstring_input'),
  logserver_to_collector: topicName().default('pipeline-logserver_to_collector'),
  batch_sender_to_prefilter: topicName().default('pipeline-batch_sender_to_prefilter'),
  prefilter_to_inspector: topicName().default('pipeline-prefilter_to_inspector'),
  inspector_to_detector: topicName().default('pipeline-inspector_to_detector'),
  detector_to_alerter: topicName().default('pipeline-detector_to_alerter'),
});

// Upper bounds are librdkafka's ranges for the matching properties.
const kafkaConsumerSchema = z
  .strictObject({
    /** Omitted: 30 minutes, the Python fallback (the shipped config.yaml sets 5 minutes). */
    max_poll_interval_ms: positiveInt(86_400_000).default(1_800_000),
    session_timeout_ms: positiveInt(3_600_000).default(45_000),
    heartbeat_interval_ms: positiveInt(3_600_000).default(3_000),
    /**
     * Metadata refresh of every Kafka client (librdkafka `topic.metadata.refresh.interval.ms`, whose
     * own default is 5 minutes): partitions added to an input topic are consumed within about this
     * long, and a deleted output topic is noticed as soon.
     */
    metadata_refresh_interval_ms: positiveInt(3_600_000).default(5_000),
    /** How long a normal offset commit retries transient coordinator errors. */
    commit_retry_timeout_seconds: positiveNumber().default(30),
    /** `consumer` is the KIP-848 protocol: the broker assigns, session and heartbeat are broker-side. */
    group_protocol: z.enum(['classic', 'consumer']).default('classic'),
    /** Only used with the classic protocol. */
    partition_assignment_strategy: z
      .enum(['cooperative-sticky', 'range', 'roundrobin'])
      .default('cooperative-sticky'),
  })
  .superRefine(
    (consumer, ctx) => {
      if (consumer.group_protocol !== 'classic') return;
      // librdkafka refuses both combinations when it creates a classic consumer.
      if (consumer.heartbeat_interval_ms >= consumer.session_timeout_ms) {
        addProblem(
          ctx,
          ['heartbeat_interval_ms'],
          `integer < session_timeout_ms (${consumer.session_timeout_ms})`,
          consumer.heartbeat_interval_ms,
        );
      }
      if (consumer.max_poll_interval_ms < consumer.session_timeout_ms) {
        addProblem(
          ctx,
          ['max_poll_interval_ms'],
          `integer >= session_timeout_ms (${consumer.session_timeout_ms})`,
          consumer.max_poll_interval_ms,
        );
      }
    },
    { when: whenPositiveIntegers('max_poll_interval_ms', 'session_timeout_ms', 'heartbeat_interval_ms') },
  );

const kafkaProducerSchema = z
  .strictObject({
    /** Bounds each native transactional call: init, begin, send offsets, commit, abort. */
    transaction_api_timeout_seconds: positiveNumber().default(30),
    /** How long a produced record may stay undelivered. */
    message_timeout_ms: positiveInt().default(60_000),
    transaction_timeout_ms: positiveInt().default(60_000),
    /**
     * Highest transaction protocol version: 2 (KIP-890, Kafka 4.0+ clusters with the
     * transaction.version feature at 2) drops two coordinator round trips per transaction; the
     * producer falls back to 1 on clusters without it. 1 forces the old protocol.
     */
    transaction_version: z.literal([1, 2], { error: '1 or 2' }).default(2),
  })
  .superRefine(
    (producer, ctx) => {
      // librdkafka rejects a transactional producer whose message.timeout.ms exceeds transaction.timeout.ms.
      if (producer.message_timeout_ms > producer.transaction_timeout_ms) {
        addProblem(
          ctx,
          ['message_timeout_ms'],
          `integer <= transaction_timeout_ms (${producer.transaction_timeout_ms})`,
          producer.message_timeout_ms,
        );
      }
    },
    { when: whenPositiveIntegers('message_timeout_ms', 'transaction_timeout_ms') },
  );

const batchOverrideSchema = z.strictObject({
  size: positiveInt().optional(),
  timeout_ms: positiveInt().optional(),
});

/**
 * A stage's entry: its batch, and optionally a commit interval that lets one transaction span
 * several batches (see src/runtime/transaction-span.ts). Without one, each batch is a transaction.
 */
const stageBatchSchema = batchOverrideSchema.extend({
  /** The transaction commits once its first batch is this old. */
  commit_interval_ms: positiveInt().optional(),
  /** The transaction commits once it holds at least this many input records. */
  commit_max_records: positiveInt().optional(),
});

const transactionBatchSchema = z.strictObject({
  /** Kafka records per transaction (not application events inside a record). */
  size: positiveInt().default(50),
  /** How long a batch is collected before it is processed anyway. */
  timeout_ms: positiveInt().default(50),
  /** Keyed by any stage's short (`detector`) or full (`data_analysis.detector`) name; the full one wins. */
  stages: z.record(stageName(), stageBatchSchema).default({}),
  /** Keyed by the complete consumed topic name. */
  topics: z.record(topicName(), batchOverrideSchema).default({}),
});

/** `environment`: where Kafka and ClickHouse are and how the Kafka clients behave. */
export const environmentSchema = z
  .strictObject({
    kafka_brokers: z.array(brokerSchema).default([]),
    /** `host:port,host:port`; when set it replaces the broker list for bootstrapping. */
    kafka_bootstrap_servers: bootstrapServerList().optional(),
    /** TLS and SASL of every Kafka client (src/config/kafka-security.ts); omitted: PLAINTEXT. */
    kafka_security: kafkaSecuritySchema.optional(),
    kafka_topics_prefix: z.strictObject({ pipeline: topicPrefixesSchema.prefault({}) }).prefault({}),
    monitoring: z.strictObject({
      clickhouse_server: clickhouseServerSchema,
    }),
    kafka_consumer: kafkaConsumerSchema.prefault({}),
    kafka_producer: kafkaProducerSchema.prefault({}),
    kafka_transaction_batch: transactionBatchSchema.prefault({}),
    record_errors: recordErrorsSchema.prefault({}),
  })
  .superRefine(
    (value, ctx) => {
      // Read defensively: this runs even when other environment keys are invalid.
      const environment = asRecord(value);
      const brokers = environment?.kafka_brokers;
      if (
        Array.isArray(brokers) &&
        brokers.length === 0 &&
        environment?.kafka_bootstrap_servers === undefined
      ) {
        addProblem(
          ctx,
          ['kafka_brokers'],
          'at least one broker (or environment.kafka_bootstrap_servers)',
          brokers,
        );
      }
    },
    { when: () => true },
  );
