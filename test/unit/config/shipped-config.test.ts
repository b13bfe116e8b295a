import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapServers, loadConfig, validateConfig } from '../../../src/config/index.ts';
import { SHIPPED_CONFIG_PATH, minimalConfig, withValue } from './helpers.ts';

test('the shipped config.yaml loads without errors', () => {
  const config = loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} });

  const [collector] = config.pipeline.log_collection.collectors;
  assert.equal(collector?.name, 'dga_collector');
  assert.deepEqual(
    collector?.required_log_information.map((field) => `${field.name}:${field.type}`),
    [
      'ts:Timestamp',
      'status_code:ListItem',
      'src_ip:IpAddress',
      'dns_server_ip:IpAddress',
      'domain_name:RegEx',
      'record_type:ListItem',
      'size:RegEx',
    ],
  );
  assert.deepEqual(
    collector?.optional_log_information.map((field) => `${field.name}:${field.type}`),
    ['response_ip:IpAddress'],
  );
  assert.equal(config.pipeline.log_filtering[0]?.relevance_method, 'check_dga_relevance');
  assert.equal(config.pipeline.data_inspection[0]?.models[0]?.model, 'ZScoreDetector');
  assert.deepEqual(config.pipeline.data_analysis[0]?.produce_topics, ['generic']);
  assert.equal(config.pipeline.alerting.external_kafka_topic, 'hamstring_alerts');
});

test('the shipped config.yaml carries the recovery settings: max.poll.interval, API timeout, batch sizes', () => {
  const { environment, pipeline } = loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} });

  assert.equal(environment.kafka_consumer.max_poll_interval_ms, 300_000);
  assert.equal(environment.kafka_producer.transaction_api_timeout_seconds, 30);
  assert.equal(environment.kafka_producer.message_timeout_ms, 60_000);
  assert.deepEqual(environment.kafka_transaction_batch, {
    size: 50,
    timeout_ms: 50,
    stages: {
      logserver: { size: 500, commit_interval_ms: 200, commit_max_records: 5000 },
      collector: { size: 500, commit_interval_ms: 200, commit_max_records: 5000 },
      prefilter: { commit_interval_ms: 200 },
      inspector: { commit_interval_ms: 200 },
      detector: { size: 10, commit_interval_ms: 200 },
      alerter: { size: 25 },
    },
    topics: {},
  });
  assert.deepEqual(pipeline.monitoring, {
    clickhouse_connector: {
      batch_size: 1000,
      batch_timeout: 2,
      connect_timeout_seconds: 10,
      operation_timeout_seconds: 30,
    },
    kafka_batch: { size: 5000, timeout_ms: 1000 },
  });
});

test('the config file defaults to $HAMSTRING_CONFIG', () => {
  const config = loadConfig({ env: { HAMSTRING_CONFIG: SHIPPED_CONFIG_PATH } });
  assert.equal(config.pipeline.log_collection.collectors.length, 1);
});

test('a ListItem field keeps its relevant list and a RegEx field its pattern', () => {
  const config = loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} });
  const fields = config.pipeline.log_collection.collectors[0]?.required_log_information ?? [];
  assert.deepEqual(
    fields.find((field) => field.name === 'status_code'),
    { name: 'status_code', type: 'ListItem', allowed: ['NOERROR', 'NXDOMAIN'], relevant: ['NXDOMAIN'] },
  );
  assert.deepEqual(
    fields.find((field) => field.name === 'size'),
    { name: 'size', type: 'RegEx', pattern: '^\\d+b?$' },
  );
});

test('bootstrap servers are the brokers hostname:external_port joined by commas', () => {
  const tree = withValue(
    minimalConfig(),
    ['environment', 'kafka_brokers'],
    [
      { hostname: 'kafka1', internal_port: 19092, external_port: 8097 },
      { hostname: 'kafka2', internal_port: 19093, external_port: 8098 },
    ],
  );
  assert.equal(bootstrapServers(validateConfig(tree, { env: {} })), 'kafka1:8097,kafka2:8098');
});

test('kafka_bootstrap_servers replaces the broker list', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_bootstrap_servers'], 'a:9092, b:9093');
  assert.equal(bootstrapServers(validateConfig(tree, { env: {} })), 'a:9092,b:9093');
});

test('the broker list may be empty when kafka_bootstrap_servers is set', () => {
  let tree = withValue(minimalConfig(), ['environment', 'kafka_brokers'], undefined);
  tree = withValue(tree, ['environment', 'kafka_bootstrap_servers'], 'a:9092');
  assert.equal(bootstrapServers(validateConfig(tree, { env: {} })), 'a:9092');
});
