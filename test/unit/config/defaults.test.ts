import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, validateConfig } from '../../../src/config/index.ts';
import { minimalConfig, shippedConfigText, withValue } from './helpers.ts';

test('max_poll_interval_ms falls back to 1800000 (30 minutes) when the key is omitted', () => {
  const text = shippedConfigText().replace(/^ {4}max_poll_interval_ms: 300000\n/m, '');
  assert.ok(!text.includes('max_poll_interval_ms:'), 'the fixture must omit the key');
  assert.equal(loadConfig({ text, env: {} }).environment.kafka_consumer.max_poll_interval_ms, 1_800_000);
});

test('max_poll_interval_ms falls back to 1800000 when the whole kafka_consumer section is omitted', () => {
  const config = validateConfig(minimalConfig(), { env: {} });
  assert.equal(config.environment.kafka_consumer.max_poll_interval_ms, 1_800_000);
});

test('an omitted kafka_consumer section gets the recovery defaults', () => {
  const { kafka_consumer } = validateConfig(minimalConfig(), { env: {} }).environment;
  assert.deepEqual(kafka_consumer, {
    max_poll_interval_ms: 1_800_000,
    session_timeout_ms: 45_000,
    heartbeat_interval_ms: 3_000,
    metadata_refresh_interval_ms: 5_000,
    commit_retry_timeout_seconds: 30,
    group_protocol: 'classic',
    partition_assignment_strategy: 'cooperative-sticky',
  });
});

test('an omitted kafka_producer section gets the transaction defaults', () => {
  const { kafka_producer } = validateConfig(minimalConfig(), { env: {} }).environment;
  assert.deepEqual(kafka_producer, {
    transaction_api_timeout_seconds: 30,
    message_timeout_ms: 60_000,
    transaction_timeout_ms: 60_000,
    transaction_version: 2,
  });
});

test('an omitted kafka_transaction_batch section is 50 records and 50 ms for every stage', () => {
  const { kafka_transaction_batch } = validateConfig(minimalConfig(), { env: {} }).environment;
  assert.deepEqual(kafka_transaction_batch, { size: 50, timeout_ms: 50, stages: {}, topics: {} });
});

test('omitted topic prefixes are the HAMSTRING topic names', () => {
  const { pipeline } = validateConfig(minimalConfig(), { env: {} }).environment.kafka_topics_prefix;
  assert.deepEqual(pipeline, {
    logserver_in: 'hamstring_input',
    logserver_to_collector: 'pipeline-logserver_to_collector',
    batch_sender_to_prefilter: 'pipeline-batch_sender_to_prefilter',
    prefilter_to_inspector: 'pipeline-prefilter_to_inspector',
    inspector_to_detector: 'pipeline-inspector_to_detector',
    detector_to_alerter: 'pipeline-detector_to_alerter',
  });
});

test('omitted pipeline, runtime and monitoring sections get their defaults', () => {
  const config = validateConfig(minimalConfig(), { env: {} });
  assert.deepEqual(config.runtime, {
    health_port: 0,
    health_host: '127.0.0.1',
    metrics: true,
    state: { dir: 'var/state', changelog_replication_factor: -1 },
  });
  assert.equal(config.environment.monitoring.clickhouse_server.port, 8123);
  assert.deepEqual(config.pipeline.log_collection.default_batch_handler_config, {
    batch_size: 2000,
    batch_timeout: 30,
    max_batch_bytes: 900_000,
    subnet_id: { ipv4_prefix_length: 24, ipv6_prefix_length: 64 },
  });
  assert.deepEqual(config.pipeline.monitoring.clickhouse_connector, {
    batch_size: 1000,
    batch_timeout: 2,
    connect_timeout_seconds: 10,
    operation_timeout_seconds: 30,
  });
  assert.deepEqual(config.pipeline.monitoring.kafka_batch, { size: 5000, timeout_ms: 1000 });
  assert.equal(config.pipeline.alerting.external_kafka_topic, 'hamstring_alerts');
  assert.deepEqual(config.logging, { base: { debug: false }, modules: {} });
});

test('a partial kafka_producer section keeps the defaults of its other keys', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_producer'], { message_timeout_ms: 30_000 });
  const { kafka_producer } = validateConfig(tree, { env: {} }).environment;
  assert.deepEqual(kafka_producer, {
    transaction_api_timeout_seconds: 30,
    message_timeout_ms: 30_000,
    transaction_timeout_ms: 60_000,
    transaction_version: 2,
  });
});

test('an empty model_args value means no model arguments', () => {
  const config = loadConfig({ text: shippedConfigText(), env: {} });
  assert.deepEqual(config.pipeline.data_inspection[0]?.ensemble?.model_args, {});
});
