import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stageTopics } from '../../../src/app/stage-topics.ts';
import { loadConfig } from '../../../src/config/index.ts';
import type { Stage } from '../../../src/runtime/index.ts';

const stage = (name: string, inputTopics: string[], outputTopics: string[] | 'any'): Stage => ({
  name,
  inputTopics,
  outputTopics,
  process: () => ({ outputs: [] }),
});

test('a stage needs its inputs, declared outputs and the dead-letter topic of each input, once each', () => {
  const text = `
environment:
  kafka_bootstrap_servers: 127.0.0.1:9092
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  record_errors:
    stages:
      routed: { dead_letter_topic: routed-dead }
`;
  const config = loadConfig({ text, env: {} });
  assert.deepEqual(stageTopics(config, [stage('a', ['in'], ['mid']), stage('b', ['mid'], ['out'])]), [
    'in',
    'mid',
    'in.DLT',
    'out',
    'mid.DLT',
  ]);
  assert.deepEqual(stageTopics(config, [stage('routed', ['x', 'y'], 'any')]), ['x', 'y', 'routed-dead']);
});
