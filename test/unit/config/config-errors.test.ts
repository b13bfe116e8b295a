import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig, unknownStageKeys, validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, shippedConfigText, withValue } from './helpers.ts';

const loadText = (text: string) => loadConfig({ text, env: {} });

test('an unknown key deep in the file is an error naming its path and the allowed keys', () => {
  const text = shippedConfigText().replace(
    '      connect_timeout_seconds: 10',
    '      connect_timeout_second: 10',
  );
  const error = configErrorOf(() => loadText(text));
  assert.equal(error.issues.length, 1);
  assert.equal(error.issues[0]?.path, 'pipeline.monitoring.clickhouse_connector.connect_timeout_second');
  assert.equal(error.issues[0]?.actual, '10');
  assert.equal(
    error.format(),
    'config.yaml: pipeline.monitoring.clickhouse_connector.connect_timeout_second: unknown key (did you mean "connect_timeout_seconds"?): ' +
      'expected one of the allowed keys [batch_size, batch_timeout, connect_timeout_seconds, operation_timeout_seconds], got 10',
  );
});

test('an unknown key inside a list entry names the entry index', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_brokers', 0, 'extrnal_port'], 9092);
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.match(
    error.format(),
    /^config\.yaml: environment\.kafka_brokers\[0\]\.extrnal_port: unknown key \(did you mean "external_port"\?\): expected one of the allowed keys \[hostname, internal_port, external_port, node_ip\], got 9092$/,
  );
});

test('an unknown top-level section is an error too', () => {
  const error = configErrorOf(() => loadText(`${shippedConfigText()}\nzeek:\n  sensors: {}\n`));
  assert.equal(error.issues[0]?.path, 'zeek');
  assert.match(
    error.format(),
    /expected one of the allowed keys \[logging, pipeline, environment, runtime, dashboard, endpoints\], got \{"sensors":\{\}\}/,
  );
});

test('per-stage sections accept any stage name, so a user stage gets its own batch and record error settings', () => {
  const tree = withValue(
    withValue(minimalConfig(), ['environment', 'kafka_transaction_batch', 'stages', 'examples.uppercase'], {
      size: 5,
    }),
    ['environment', 'record_errors', 'stages', 'uppercase'],
    { max_deliveries: 2 },
  );
  const config = validateConfig(tree, { env: {} });
  assert.deepEqual(config.environment.kafka_transaction_batch.stages, { 'examples.uppercase': { size: 5 } });
  assert.equal(config.environment.record_errors.stages.uppercase?.max_deliveries, 2);
});

test('a per-stage key that cannot be a stage name is an error naming its path and the expected name', () => {
  const tree = withValue(minimalConfig(), ['environment', 'record_errors', 'stages', 'my stage'], {
    max_deliveries: 2,
  });
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(error.issues[0]?.path, 'environment.record_errors.stages["my stage"]');
  assert.match(error.format(), /expected stage name \(letters, digits, "\.", "_", "-"\)/);
});

test('a wrong value under a user stage names the key path and the expected value', () => {
  const tree = withValue(
    minimalConfig(),
    ['environment', 'kafka_transaction_batch', 'stages', 'mine', 'size'],
    0,
  );
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.deepEqual(
    error.issues.map((i) => [i.path, i.expected]),
    [['environment.kafka_transaction_batch.stages.mine.size', 'positive integer']],
  );
});

test('unknownStageKeys reports keys naming no built-in or running stage, with the name a typo most likely meant', () => {
  const text = shippedConfigText().replace(
    '      detector:\n        size: 10',
    '      detecter:\n        size: 10',
  );
  const config = loadText(text);
  assert.deepEqual(unknownStageKeys(config, [{ name: 'examples.uppercase', shortName: 'uppercase' }]), [
    { path: 'environment.kafka_transaction_batch.stages.detecter', suggestion: 'detector' },
  ]);
  assert.deepEqual(unknownStageKeys(config, [{ name: 'detecter' }]), []);
});

test('a wrong type reports the expected type and the actual value', () => {
  const text = shippedConfigText().replace('    batch_size: 1000\n', '    batch_size: "many"\n');
  const error = configErrorOf(() => loadText(text));
  assert.deepEqual(error.issues, [
    {
      path: 'pipeline.monitoring.clickhouse_connector.batch_size',
      expected: 'positive integer',
      actual: '"many"',
      message: 'expected positive integer, got "many"',
    },
  ]);
  assert.equal(
    error.format(),
    'config.yaml: pipeline.monitoring.clickhouse_connector.batch_size: expected positive integer, got "many"',
  );
});

test('a batch bound Kafka would refuse, or too small for a long line, names its key and the range', () => {
  for (const value of ['2000000', '1000', '"1MB"']) {
    const text = shippedConfigText().replace('max_batch_bytes: 900000 #', `max_batch_bytes: ${value} #`);
    assert.equal(
      configErrorOf(() => loadText(text)).format(),
      `config.yaml: pipeline.log_collection.default_batch_handler_config.max_batch_bytes: expected integer between 65536 and 990000, got ${value}`,
    );
  }
});

test('a mapping where a list is expected is reported with the mapping as the actual value', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_brokers'], { hostname: 'kafka1' });
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_brokers: expected list, got {"hostname":"kafka1"}',
  );
});

test('a missing required key is reported as got nothing', () => {
  const tree = withValue(
    minimalConfig(),
    ['environment', 'monitoring', 'clickhouse_server', 'hostname'],
    undefined,
  );
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(
    error.format(),
    'config.yaml: environment.monitoring.clickhouse_server.hostname: expected non-empty string, got nothing',
  );
});

test('an invalid enum value lists the accepted values', () => {
  const text = shippedConfigText().replace(
    'relevance_method: check_dga_relevance',
    'relevance_method: check_relevance',
  );
  const error = configErrorOf(() => loadText(text));
  assert.equal(
    error.format(),
    'config.yaml: pipeline.log_filtering[0].relevance_method: expected one of "check_dga_relevance", "check_tunnel_relevance", "no_relevance_check", got "check_relevance"',
  );
});

test('a long actual value is truncated', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_brokers'], 'x'.repeat(500));
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  const actual = error.issues[0]?.actual ?? '';
  assert.ok(actual.length <= 80, `actual has ${actual.length} characters`);
  assert.ok(actual.endsWith('…'));
});

test('several problems at once are all listed, one line each', () => {
  const text = shippedConfigText()
    .replace('log_to_file: true', 'log_to_fil: true')
    .replace(
      /threshold: [\d.]+[^\n]*\n {6}inspector_name: dga_inspector/,
      'threshold: high\n      inspector_name: dga_inspector',
    )
    .replace('message_timeout_ms: 60000', 'message_timeout_ms: 90000')
    .replace('  kafka_transaction_batch:\n    size: 50', '  kafka_transaction_batch:\n    size: 0');
  const error = configErrorOf(() => loadText(text));
  const lines = error.format().split('\n');
  assert.equal(lines.length, 4);
  assert.deepEqual(error.issues.map((issue) => issue.path).sort(), [
    'environment.kafka_producer.message_timeout_ms',
    'environment.kafka_transaction_batch.size',
    'pipeline.alerting.log_to_fil',
    'pipeline.data_analysis[0].threshold',
  ]);
  assert.ok(
    lines.includes(
      'config.yaml: pipeline.data_analysis[0].threshold: expected number between 0 and 1, got "high"',
    ),
  );
  assert.ok(
    lines.includes('config.yaml: environment.kafka_transaction_batch.size: expected positive integer, got 0'),
  );
  assert.equal(error.message, error.format());
});

test('message_timeout_ms above transaction_timeout_ms is an error naming both keys', () => {
  const text = shippedConfigText().replace('message_timeout_ms: 60000', 'message_timeout_ms: 90000');
  const error = configErrorOf(() => loadText(text));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_producer.message_timeout_ms: expected integer <= transaction_timeout_ms (60000), got 90000',
  );
});

test('a transaction_version other than 1 or 2 is an error naming the key and the two versions', () => {
  const text = shippedConfigText().replace('transaction_version: 2', 'transaction_version: 3');
  const error = configErrorOf(() => loadText(text));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_producer.transaction_version: expected 1 or 2, got 3',
  );
});

test('message_timeout_ms equal to a raised transaction_timeout_ms is accepted', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_producer'], {
    message_timeout_ms: 90_000,
    transaction_timeout_ms: 90_000,
  });
  assert.equal(validateConfig(tree, { env: {} }).environment.kafka_producer.message_timeout_ms, 90_000);
});

test('the message timeout rule is still checked when another producer key is broken', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_producer'], {
    transaction_api_timeout_seconds: 'slow',
    message_timeout_ms: 90_000,
  });
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.deepEqual(
    error.issues.map((issue) => issue.path),
    [
      'environment.kafka_producer.transaction_api_timeout_seconds',
      'environment.kafka_producer.message_timeout_ms',
    ],
  );
});

test('a heartbeat interval not below the session timeout is an error', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_consumer'], {
    session_timeout_ms: 10_000,
    heartbeat_interval_ms: 10_000,
  });
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_consumer.heartbeat_interval_ms: expected integer < session_timeout_ms (10000), got 10000',
  );
});

test('a max poll interval below the session timeout is an error', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_consumer'], {
    max_poll_interval_ms: 30_000,
  });
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_consumer.max_poll_interval_ms: expected integer >= session_timeout_ms (45000), got 30000',
  );
});

test('a configuration without brokers and without bootstrap servers is an error', () => {
  const tree = withValue(minimalConfig(), ['environment', 'kafka_brokers'], []);
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(
    error.format(),
    'config.yaml: environment.kafka_brokers: expected at least one broker (or environment.kafka_bootstrap_servers), got []',
  );
});

test('a YAML syntax error is a ConfigError with line and column', () => {
  const text = 'environment:\n  kafka_brokers: [\n    {hostname: a\n  monitoring: : x\n';
  const error = configErrorOf(() => loadText(text));
  const [first] = error.issues;
  assert.ok(first?.line !== undefined && first.column !== undefined);
  assert.match(error.format(), /^config\.yaml:\d+:\d+: expected valid YAML \(.+\), got ".*"$/m);
});

test('a YAML syntax error points at the offending line', () => {
  const text = shippedConfigText().replace('  log_filtering:', '  log_filtering: a: b');
  const lineNumber = text.split('\n').findIndex((line) => line.startsWith('  log_filtering:')) + 1;
  const error = configErrorOf(() => loadText(text));
  assert.equal(error.issues[0]?.line, lineNumber);
  assert.equal(
    error.format().split('\n')[0],
    `config.yaml:${lineNumber}:18: expected valid YAML (Nested mappings are not allowed in compact mappings), got "  log_filtering: a: b"`,
  );
});

test('a duplicate key is a YAML error rather than a silent overwrite', () => {
  const error = configErrorOf(() => loadText('environment:\n  kafka_brokers: []\n  kafka_brokers: []\n'));
  assert.match(
    error.format(),
    /^config\.yaml:3:3: expected valid YAML \(Map keys must be unique\), got " {2}kafka_brokers: \[\]"$/,
  );
});

test('an empty file is an error about the whole document', () => {
  const error = configErrorOf(() => loadText(''));
  assert.equal(error.format(), 'config.yaml: expected mapping, got null');
});

test('a missing file is a ConfigError naming the path', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hamstring-config-'));
  try {
    const path = join(directory, 'config.yaml');
    const error = configErrorOf(() => loadConfig({ path, env: {} }));
    assert.equal(
      error.format(),
      `${path}: expected readable config file, got ${JSON.stringify(path)} (ENOENT: no such file or directory)`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test('a missing file named by HAMSTRING_CONFIG says where the path came from', () => {
  const error = configErrorOf(() => loadConfig({ env: { HAMSTRING_CONFIG: '/nonexistent/hamstring.yaml' } }));
  assert.match(
    error.format(),
    /^\/nonexistent\/hamstring\.yaml: expected readable config file, got "\/nonexistent\/hamstring\.yaml" \(ENOENT: .*; path from HAMSTRING_CONFIG\)$/,
  );
});

test('a file given by path is read and its name prefixes the error lines', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hamstring-config-'));
  try {
    const path = join(directory, 'hamstring.yaml');
    writeFileSync(path, shippedConfigText().replace('time_range: 20', 'time_range: -20'));
    const error = configErrorOf(() => loadConfig({ path, env: {} }));
    assert.equal(
      error.format(),
      `${path}: pipeline.data_inspection[0].time_range: expected positive integer, got -20`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test('ConfigError is an Error whose name is ConfigError', () => {
  const error = configErrorOf(() => loadText(''));
  assert.ok(error instanceof Error);
  assert.ok(error instanceof ConfigError);
  assert.equal(error.name, 'ConfigError');
});

test('a changelog replication factor of 0 names its key and what is allowed', () => {
  const tree = withValue(minimalConfig(), ['runtime', 'state', 'changelog_replication_factor'], 0);
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(error.issues[0]?.path, 'runtime.state.changelog_replication_factor');
  assert.match(error.format(), /expected integer between -1 and 32, not 0, got 0/);
});
