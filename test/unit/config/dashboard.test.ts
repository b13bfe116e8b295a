import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

test('an omitted dashboard section serves on 127.0.0.1:8080, refreshing every 2 s over 15 minutes', () => {
  const { dashboard } = validateConfig(minimalConfig(), { env: {} });
  assert.deepEqual(dashboard, {
    enabled: true,
    host: '127.0.0.1',
    port: 8080,
    refresh_ms: 2_000,
    window_minutes: 15,
  });
});

test('dashboard.port out of range is an error naming the key path and the expected range', () => {
  const tree = withValue(minimalConfig(), ['dashboard', 'port'], 70_000);
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(error.issues[0]?.path, 'dashboard.port');
  assert.match(error.format(), /dashboard\.port: expected integer between 0 and 65535, got 70000/);
});

test('a misspelt dashboard key is an error suggesting the right one', () => {
  const tree = withValue(minimalConfig(), ['dashboard', 'prot'], 8081);
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(error.issues[0]?.path, 'dashboard.prot');
  assert.match(error.format(), /did you mean "port"\?/);
});
