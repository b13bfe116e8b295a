import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapServers, loadConfig } from '../../../src/config/index.ts';
import { configErrorOf, shippedConfigText } from './helpers.ts';

const load = (env: NodeJS.ProcessEnv) => loadConfig({ text: shippedConfigText(), env });

test('KAFKA_TRANSACTION_API_TIMEOUT_SECONDS overrides transaction_api_timeout_seconds', () => {
  const config = load({ KAFKA_TRANSACTION_API_TIMEOUT_SECONDS: '7.5' });
  assert.equal(config.environment.kafka_producer.transaction_api_timeout_seconds, 7.5);
});

test('KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS overrides message_timeout_ms', () => {
  const config = load({ KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: '45000' });
  assert.equal(config.environment.kafka_producer.message_timeout_ms, 45_000);
});

test('KAFKA_TRANSACTION_VERSION overrides transaction_version; anything but 1 or 2 names the variable', () => {
  assert.equal(load({}).environment.kafka_producer.transaction_version, 2);
  assert.equal(load({ KAFKA_TRANSACTION_VERSION: '1' }).environment.kafka_producer.transaction_version, 1);
  const error = configErrorOf(() => load({ KAFKA_TRANSACTION_VERSION: '3' }));
  assert.equal(
    error.format(),
    'env: KAFKA_TRANSACTION_VERSION: expected 1 or 2, got "3" (overrides environment.kafka_producer.transaction_version)',
  );
});

test('KAFKA_METADATA_REFRESH_INTERVAL_MS overrides metadata_refresh_interval_ms', () => {
  assert.equal(load({}).environment.kafka_consumer.metadata_refresh_interval_ms, 5_000);
  const config = load({ KAFKA_METADATA_REFRESH_INTERVAL_MS: '2000' });
  assert.equal(config.environment.kafka_consumer.metadata_refresh_interval_ms, 2_000);
});

test('KAFKA_BOOTSTRAP_SERVERS overrides the broker list', () => {
  const config = load({ KAFKA_BOOTSTRAP_SERVERS: 'kafka1:19092,kafka2:19093' });
  assert.equal(config.environment.kafka_bootstrap_servers, 'kafka1:19092,kafka2:19093');
  assert.equal(bootstrapServers(config), 'kafka1:19092,kafka2:19093');
});

test('KAFKA_BOOTSTRAP_SERVERS wins over kafka_bootstrap_servers in the file', () => {
  const text = shippedConfigText().replace(
    '  # kafka_bootstrap_servers: kafka1:9092,kafka2:9092',
    '  kafka_bootstrap_servers: file-host:9092',
  );
  const config = loadConfig({ text, env: { KAFKA_BOOTSTRAP_SERVERS: '[::1]:9092' } });
  assert.equal(bootstrapServers(config), '[::1]:9092');
});

test('HAMSTRING_HEALTH_PORT overrides runtime.health_port, 0 included', () => {
  assert.equal(load({}).runtime.health_port, 0);
  assert.equal(load({ HAMSTRING_HEALTH_PORT: '9465' }).runtime.health_port, 9465);
  const text = `${shippedConfigText()}\nruntime:\n  health_port: 9464\n`;
  assert.equal(loadConfig({ text, env: {} }).runtime.health_port, 9464);
  assert.equal(loadConfig({ text, env: { HAMSTRING_HEALTH_PORT: '0' } }).runtime.health_port, 0);
});

test('a HAMSTRING_HEALTH_PORT that is no port is a ConfigError naming the variable', () => {
  assert.equal(
    configErrorOf(() => load({ HAMSTRING_HEALTH_PORT: 'http' })).format(),
    'env: HAMSTRING_HEALTH_PORT: expected integer between 0 and 65535, got "http" (overrides runtime.health_port)',
  );
  assert.match(
    configErrorOf(() => load({ HAMSTRING_HEALTH_PORT: '70000' })).format(),
    /^config\.yaml: runtime\.health_port: .*70000 \(value from HAMSTRING_HEALTH_PORT\)$/,
  );
});

test('without override variables the file values stay', () => {
  const { kafka_producer, kafka_bootstrap_servers } = load({}).environment;
  assert.equal(kafka_producer.transaction_api_timeout_seconds, 30);
  assert.equal(kafka_producer.message_timeout_ms, 60_000);
  assert.equal(kafka_bootstrap_servers, undefined);
});

test('an empty override variable counts as unset', () => {
  const config = load({ KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: '', KAFKA_BOOTSTRAP_SERVERS: '  ' });
  assert.equal(config.environment.kafka_producer.message_timeout_ms, 60_000);
  assert.equal(bootstrapServers(config), '127.0.0.1:9092');
});

test('KAFKA_TRANSACTION_BATCH_* are validated at load but not written into the configuration', () => {
  const config = load({ KAFKA_TRANSACTION_BATCH_SIZE: '5', KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: '10' });
  assert.equal(config.environment.kafka_transaction_batch.size, 50);
  assert.equal(config.environment.kafka_transaction_batch.timeout_ms, 50);
});

test('a non-numeric KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS is a ConfigError naming the variable and the key it overrides', () => {
  const error = configErrorOf(() => load({ KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: 'abc' }));
  assert.deepEqual(error.issues, [
    {
      path: 'KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS',
      expected: 'positive integer',
      actual: '"abc"',
      message:
        'expected positive integer, got "abc" (overrides environment.kafka_producer.message_timeout_ms)',
      origin: 'env',
    },
  ]);
  assert.equal(
    error.format(),
    'env: KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: expected positive integer, got "abc" (overrides environment.kafka_producer.message_timeout_ms)',
  );
});

test('a negative KAFKA_TRANSACTION_API_TIMEOUT_SECONDS is a ConfigError naming the variable and the key it overrides', () => {
  const error = configErrorOf(() => load({ KAFKA_TRANSACTION_API_TIMEOUT_SECONDS: '-3' }));
  assert.equal(
    error.format(),
    'env: KAFKA_TRANSACTION_API_TIMEOUT_SECONDS: expected number > 0, got "-3" (overrides environment.kafka_producer.transaction_api_timeout_seconds)',
  );
});

test('a KAFKA_BOOTSTRAP_SERVERS entry without a port is a ConfigError', () => {
  const error = configErrorOf(() => load({ KAFKA_BOOTSTRAP_SERVERS: 'kafka1:9092,kafka2' }));
  assert.equal(error.issues[0]?.path, 'KAFKA_BOOTSTRAP_SERVERS');
  assert.match(
    error.format(),
    /^env: KAFKA_BOOTSTRAP_SERVERS: expected comma-separated host:port list.*, got "kafka1:9092,kafka2" \(overrides environment\.kafka_bootstrap_servers\)$/,
  );
});

test('malformed KAFKA_TRANSACTION_BATCH_SIZE and _TIMEOUT_MS fail at load', () => {
  const error = configErrorOf(() =>
    load({ KAFKA_TRANSACTION_BATCH_SIZE: '-3', KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: '1.5' }),
  );
  assert.deepEqual(
    error.issues.map((issue) => issue.path),
    ['KAFKA_TRANSACTION_BATCH_SIZE', 'KAFKA_TRANSACTION_BATCH_TIMEOUT_MS'],
  );
  assert.match(
    error.format(),
    /^env: KAFKA_TRANSACTION_BATCH_SIZE: expected positive integer, got "-3" \(overrides environment\.kafka_transaction_batch size/m,
  );
});

test('every malformed variable is listed together with the file problems', () => {
  const text = shippedConfigText().replace('log_to_file: true', 'log_to_file: yes please');
  const error = configErrorOf(() =>
    loadConfig({
      text,
      env: { KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: 'abc', KAFKA_TRANSACTION_BATCH_SIZE: 'x' },
    }),
  );
  assert.deepEqual(
    error.issues.map((issue) => issue.path),
    ['KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS', 'KAFKA_TRANSACTION_BATCH_SIZE', 'pipeline.alerting.log_to_file'],
  );
});

test('an override that breaks a cross-field rule names the variable it came from', () => {
  const error = configErrorOf(() => load({ KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS: '90000' }));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_producer.message_timeout_ms: expected integer <= transaction_timeout_ms (60000), got 90000 (value from KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS)',
  );
});
