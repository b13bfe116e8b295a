import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../../src/config/index.ts';
import type { HamstringConfigInput } from '../../../src/config/index.ts';

export const SHIPPED_CONFIG_PATH = fileURLToPath(new URL('../../../config.yaml', import.meta.url));

export function shippedConfigText(): string {
  return readFileSync(SHIPPED_CONFIG_PATH, 'utf8');
}

/** The smallest valid configuration: one broker and the ClickHouse server. */
export function minimalConfig(): HamstringConfigInput {
  return {
    environment: {
      kafka_brokers: [{ hostname: 'kafka1', internal_port: 19092, external_port: 8097 }],
      monitoring: { clickhouse_server: { hostname: 'clickhouse' } },
    },
  };
}

/** A copy of `tree` with `value` at `path` (parents created); `undefined` deletes the key. */
export function withValue(tree: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(tree) as Record<string | number, unknown>;
  let node = copy;
  path.forEach((key, index) => {
    if (index === path.length - 1) {
      if (value === undefined) delete node[key];
      else node[key] = value;
      return;
    }
    node[key] ??= typeof path[index + 1] === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  });
  return copy;
}

/** Runs `load`, asserts it throws a ConfigError and returns it. */
export function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError, but the configuration was accepted');
}
