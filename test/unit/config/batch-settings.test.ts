import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, resolveBatchSettings, validateConfig } from '../../../src/config/index.ts';
import type { HamstringConfig } from '../../../src/config/index.ts';
import { minimalConfig, withValue } from './helpers.ts';

const DETECTOR_TOPIC = 'pipeline-inspector_to_detector-dga_detector';
const DOMAINATOR_TOPIC = 'pipeline-inspector_to_detector-domainator';
const detector = { short: 'detector', full: 'data_analysis.detector' };

function configWithBatch(batch: unknown): HamstringConfig {
  return validateConfig(withValue(minimalConfig(), ['environment', 'kafka_transaction_batch'], batch), {
    env: {},
  });
}

const seedConfig = configWithBatch({
  size: 50,
  timeout_ms: 50,
  stages: { detector: { size: 10 }, alerter: { size: 25 } },
  topics: { [DOMAINATOR_TOPIC]: { size: 3, timeout_ms: 25 } },
});

test('a stage without entries inherits the global size and timeout', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: { short: 'prefilter' },
    topics: ['pipeline-batch_sender_to_prefilter-dga_prefilter'],
  });
  assert.deepEqual(settings, { size: 50, timeoutMs: 50, source: { size: 'global', timeoutMs: 'global' } });
});

test('without stage and topics the global values apply', () => {
  const settings = resolveBatchSettings({ config: seedConfig, env: {}, topics: [] });
  assert.deepEqual(settings, { size: 50, timeoutMs: 50, source: { size: 'global', timeoutMs: 'global' } });
});

test('a short stage entry overrides the global size', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: detector,
    topics: [DETECTOR_TOPIC],
  });
  assert.deepEqual(settings, {
    size: 10,
    timeoutMs: 50,
    source: { size: 'stage:detector', timeoutMs: 'global' },
  });
});

test('a full stage name entry overrides the short name entry', () => {
  const config = configWithBatch({
    stages: { detector: { size: 10, timeout_ms: 40 }, 'data_analysis.detector': { size: 7 } },
  });
  const settings = resolveBatchSettings({ config, env: {}, stage: detector, topics: [DETECTOR_TOPIC] });
  assert.deepEqual(settings, {
    size: 7,
    timeoutMs: 40,
    source: { size: 'stage:data_analysis.detector', timeoutMs: 'stage:detector' },
  });
});

test('the full stage name is derived from a known short name when the caller omits it', () => {
  const config = configWithBatch({ stages: { 'data_analysis.detector': { size: 7 } } });
  const settings = resolveBatchSettings({
    config,
    env: {},
    stage: { short: 'detector' },
    topics: [DETECTOR_TOPIC],
  });
  assert.equal(settings.size, 7);
  assert.equal(settings.source.size, 'stage:data_analysis.detector');
});

test('an exact topic entry overrides the stage and global values', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: detector,
    topics: [DOMAINATOR_TOPIC],
  });
  assert.deepEqual(settings, {
    size: 3,
    timeoutMs: 25,
    source: { size: `topic:${DOMAINATOR_TOPIC}`, timeoutMs: `topic:${DOMAINATOR_TOPIC}` },
  });
});

test('a topic entry applies only to the exact topic name, not to a prefix of it', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: detector,
    topics: ['pipeline-inspector_to_detector'],
  });
  assert.equal(settings.source.size, 'stage:detector');
});

test('size and timeout resolve independently: a timeout-only topic entry takes its size from the stage', () => {
  const config = configWithBatch({
    stages: { detector: { size: 10 } },
    topics: { [DETECTOR_TOPIC]: { timeout_ms: 25 } },
  });
  const settings = resolveBatchSettings({ config, env: {}, stage: detector, topics: [DETECTOR_TOPIC] });
  assert.deepEqual(settings, {
    size: 10,
    timeoutMs: 25,
    source: { size: 'stage:detector', timeoutMs: `topic:${DETECTOR_TOPIC}` },
  });
});

test('a size-only stage entry takes its timeout from the global value', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: { short: 'alerter' },
    topics: [],
  });
  assert.deepEqual(settings, {
    size: 25,
    timeoutMs: 50,
    source: { size: 'stage:alerter', timeoutMs: 'global' },
  });
});

test('the environment variables override topic, stage and global values', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: { KAFKA_TRANSACTION_BATCH_SIZE: '7', KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: '99' },
    stage: detector,
    topics: [DOMAINATOR_TOPIC],
  });
  assert.deepEqual(settings, {
    size: 7,
    timeoutMs: 99,
    source: { size: 'env:KAFKA_TRANSACTION_BATCH_SIZE', timeoutMs: 'env:KAFKA_TRANSACTION_BATCH_TIMEOUT_MS' },
  });
});

test('the size variable alone leaves the timeout to the topic entry', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: { KAFKA_TRANSACTION_BATCH_SIZE: '7' },
    stage: detector,
    topics: [DOMAINATOR_TOPIC],
  });
  assert.deepEqual(settings.source, {
    size: 'env:KAFKA_TRANSACTION_BATCH_SIZE',
    timeoutMs: `topic:${DOMAINATOR_TOPIC}`,
  });
  assert.equal(settings.timeoutMs, 25);
});

test('an empty batch variable counts as unset', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: { KAFKA_TRANSACTION_BATCH_SIZE: '' },
    stage: detector,
    topics: [],
  });
  assert.equal(settings.source.size, 'stage:detector');
});

test('explicit caller values override the environment variables', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: { KAFKA_TRANSACTION_BATCH_SIZE: '7', KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: '99' },
    stage: detector,
    topics: [DOMAINATOR_TOPIC],
    explicit: { maxMessages: 2000 },
  });
  assert.deepEqual(settings, {
    size: 2000,
    timeoutMs: 99,
    source: { size: 'explicit', timeoutMs: 'env:KAFKA_TRANSACTION_BATCH_TIMEOUT_MS' },
  });
});

test('an explicit timeout alone leaves the size to the normal resolution', () => {
  const settings = resolveBatchSettings({
    config: seedConfig,
    env: {},
    stage: detector,
    topics: [DETECTOR_TOPIC],
    explicit: { timeoutMs: 30_000 },
  });
  assert.deepEqual(settings, {
    size: 10,
    timeoutMs: 30_000,
    source: { size: 'stage:detector', timeoutMs: 'explicit' },
  });
});

test('a consumer of several topics takes the smallest size and the smallest timeout across them', () => {
  const config = configWithBatch({
    size: 50,
    timeout_ms: 50,
    topics: { 'topic-a': { size: 3 }, 'topic-b': { size: 8, timeout_ms: 10 } },
  });
  const settings = resolveBatchSettings({ config, env: {}, topics: ['topic-c', 'topic-b', 'topic-a'] });
  assert.deepEqual(settings, {
    size: 3,
    timeoutMs: 10,
    source: { size: 'topic:topic-a', timeoutMs: 'topic:topic-b' },
  });
});

test('a topic without an entry competes with its stage value when several topics are consumed', () => {
  const config = configWithBatch({ stages: { detector: { size: 10 } }, topics: { 'topic-a': { size: 80 } } });
  const settings = resolveBatchSettings({ config, env: {}, stage: detector, topics: ['topic-a', 'topic-b'] });
  assert.equal(settings.size, 10);
  assert.equal(settings.source.size, 'stage:detector');
});

test('a malformed batch variable is a ConfigError naming the variable', () => {
  assert.throws(
    () =>
      resolveBatchSettings({
        config: seedConfig,
        env: { KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: 'soon' },
        topics: [],
      }),
    (thrown: unknown) => {
      assert.ok(thrown instanceof ConfigError);
      assert.equal(thrown.issues[0]?.path, 'KAFKA_TRANSACTION_BATCH_TIMEOUT_MS');
      assert.match(
        thrown.format(),
        /^env: KAFKA_TRANSACTION_BATCH_TIMEOUT_MS: expected positive integer, got "soon"/,
      );
      return true;
    },
  );
});

test('an explicit value that is not a positive integer is rejected', () => {
  assert.throws(
    () => resolveBatchSettings({ config: seedConfig, env: {}, topics: [], explicit: { maxMessages: 0 } }),
    RangeError,
  );
});
