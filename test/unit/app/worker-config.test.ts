import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config/index.ts';
import { recordErrorPolicyFromConfig, workerOptionsFromConfig } from '../../../src/app/worker-config.ts';
import type { Stage } from '../../../src/runtime/stage.ts';

const detector: Stage = {
  name: 'data_analysis.detector',
  shortName: 'detector',
  inputTopics: ['pipeline-inspector_to_detector-dga_detector'],
  outputTopics: ['pipeline-detector_to_alerter-generic'],
  process: () => ({ outputs: [] }),
};

describe('worker options from config.yaml', () => {
  test('the shipped config gives the detector batch 10, the API timeout in ms and the stage processing timeout', () => {
    const config = loadConfig({ path: 'config.yaml', env: {} });
    const o = workerOptionsFromConfig({ config, stage: detector, env: { HAMSTRING_INSTANCE_ID: 'd-1' } });
    assert.deepEqual(o.batch, { size: 10, timeoutMs: 50 });
    assert.equal(o.kafka.apiTimeoutMs, 30_000);
    assert.equal(o.kafka.maxPollIntervalMs, 300_000);
    assert.equal(o.instanceId, 'd-1');
    assert.equal(o.recordErrors?.processingTimeoutMs, 120_000);
    assert.equal(o.recordErrors?.deadLetterTopic?.('t'), 't.DLT');
  });

  test('env overrides are final: batch size and API timeout', () => {
    const env = { KAFKA_TRANSACTION_BATCH_SIZE: '7', KAFKA_TRANSACTION_API_TIMEOUT_SECONDS: '4' };
    const config = loadConfig({ path: 'config.yaml', env });
    const o = workerOptionsFromConfig({ config, stage: detector, env });
    assert.equal(o.batch.size, 7);
    assert.equal(o.kafka.apiTimeoutMs, 4_000);
  });

  test('a stage entry under its full name overrides the short-name entry and the global record error settings', () => {
    const text = `
environment:
  kafka_brokers: [{ hostname: 127.0.0.1, internal_port: 9092, external_port: 9092 }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  record_errors:
    backoff: { type: fixed, interval_ms: 500, max_attempts: 2 }
    max_deliveries: 5
    stages:
      detector: { max_deliveries: 4, dead_letter_topic: detector-dlt }
      data_analysis.detector: { max_deliveries: 2 }
`;
    const config = loadConfig({ text, env: {} });
    const p = recordErrorPolicyFromConfig(config, detector);
    assert.equal(p.maxDeliveries, 2);
    assert.equal(p.deadLetterTopic('anything'), 'detector-dlt');
    assert.equal(p.backOff(1, 0), 500);
    assert.equal(p.backOff(3, 0), undefined);
  });

  test('bounded redelivery follows track_delivery_attempts: the configured topic, or no store at all', () => {
    const base = `
environment:
  kafka_brokers: [{ hostname: 127.0.0.1, internal_port: 9092, external_port: 9092 }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
`;
    const on = workerOptionsFromConfig({
      config: loadConfig({ text: base, env: {} }),
      stage: detector,
      env: {},
    });
    assert.equal(on.attemptStore, undefined, 'the worker keeps its own store');
    assert.equal(on.attemptTopic, 'hamstring.delivery-attempts');
    const renamed = loadConfig({
      text: `${base}  record_errors: { delivery_attempts_topic: my-attempts }\n`,
      env: {},
    });
    assert.equal(
      workerOptionsFromConfig({ config: renamed, stage: detector, env: {} }).attemptTopic,
      'my-attempts',
    );
    const off = loadConfig({ text: `${base}  record_errors: { track_delivery_attempts: false }\n`, env: {} });
    assert.equal(workerOptionsFromConfig({ config: off, stage: detector, env: {} }).attemptStore, false);
  });

  test('a typo in record_errors names the key path', () => {
    const text = `
environment:
  kafka_brokers: [{ hostname: 127.0.0.1, internal_port: 9092, external_port: 9092 }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  record_errors: { max_delivery: 3 }
`;
    assert.throws(() => loadConfig({ text, env: {} }), /environment\.record_errors\.max_delivery/);
  });

  test('a commit interval is per stage: the full-name entry beats the short one, and a stage without one gets none', () => {
    const text = `
environment:
  kafka_brokers: [{ hostname: 127.0.0.1, internal_port: 9092, external_port: 9092 }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  kafka_transaction_batch:
    stages:
      detector: { commit_interval_ms: 500 }
      data_analysis.detector: { size: 200, commit_interval_ms: 100, commit_max_records: 2000 }
`;
    const config = loadConfig({ text, env: {} });
    const o = workerOptionsFromConfig({ config, stage: detector, env: {} });
    assert.deepEqual(o.commitInterval, { maxMs: 100, maxRecords: 2000 });
    assert.equal(o.batch.size, 200);
    const shipped = loadConfig({ path: 'config.yaml', env: {} });
    assert.deepEqual(workerOptionsFromConfig({ config: shipped, stage: detector, env: {} }).commitInterval, {
      maxMs: 200,
    });
    const alerter: Stage = { ...detector, name: 'data_alerting.alerter', shortName: 'alerter' };
    assert.equal(
      workerOptionsFromConfig({ config: shipped, stage: alerter, env: {} }).commitInterval,
      undefined,
    );
  });

  test('a commit interval that is not a positive integer names the key path', () => {
    const text = `
environment:
  kafka_brokers: [{ hostname: 127.0.0.1, internal_port: 9092, external_port: 9092 }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  kafka_transaction_batch: { stages: { detector: { commit_interval_ms: 0 } } }
`;
    assert.throws(
      () => loadConfig({ text, env: {} }),
      /environment\.kafka_transaction_batch\.stages\.detector\.commit_interval_ms/,
    );
  });
});
