import type { ConfigIssue } from './errors.ts';
import { formatPath, makeIssue } from './errors.ts';
import { BOOTSTRAP_SERVERS_EXPECTED, normalizeBootstrapServers } from './value-schemas.ts';

type TextParser = (text: string) => string | number | undefined;

const positiveIntegerText: TextParser = (text) => {
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
};

const positiveNumberText: TextParser = (text) => {
  if (!/^\d+(\.\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 ? value : undefined;
};

interface ConfigOverrideSpec {
  readonly variable: string;
  readonly path: readonly string[];
  readonly expected: string;
  readonly parse: TextParser;
}

/** Environment variables that replace a config.yaml value; they are final over the file. */
export const CONFIG_ENV_OVERRIDES: readonly ConfigOverrideSpec[] = [
  {
    variable: 'KAFKA_TRANSACTION_API_TIMEOUT_SECONDS',
    path: ['environment', 'kafka_producer', 'transaction_api_timeout_seconds'],
    expected: 'number > 0',
    parse: positiveNumberText,
  },
  {
    variable: 'KAFKA_PRODUCER_MESSAGE_TIMEOUT_MS',
    path: ['environment', 'kafka_producer', 'message_timeout_ms'],
    expected: 'positive integer',
    parse: positiveIntegerText,
  },
  // Pins the old transaction protocol on a host without editing the shared config.yaml.
  {
    variable: 'KAFKA_TRANSACTION_VERSION',
    path: ['environment', 'kafka_producer', 'transaction_version'],
    expected: '1 or 2',
    parse: (text) => (text === '1' || text === '2' ? Number(text) : undefined),
  },
  {
    variable: 'KAFKA_METADATA_REFRESH_INTERVAL_MS',
    path: ['environment', 'kafka_consumer', 'metadata_refresh_interval_ms'],
    expected: 'positive integer',
    parse: positiveIntegerText,
  },
  // Several stages on one machine share one config.yaml, and each needs a health port of its own.
  {
    variable: 'HAMSTRING_HEALTH_PORT',
    path: ['runtime', 'health_port'],
    expected: 'integer between 0 and 65535',
    parse: (text) => (/^\d{1,5}$/.test(text) ? Number(text) : undefined),
  },
  {
    variable: 'KAFKA_BOOTSTRAP_SERVERS',
    path: ['environment', 'kafka_bootstrap_servers'],
    expected: BOOTSTRAP_SERVERS_EXPECTED,
    parse: normalizeBootstrapServers,
  },
  // The Kafka security settings (kafka-security.ts checks their values); the passwords themselves
  // never enter the tree, resolveKafkaSecurity reads them.
  ...(
    [
      ['KAFKA_SECURITY_PROTOCOL', 'protocol'],
      ['KAFKA_SSL_CA_FILE', 'ca_file'],
      ['KAFKA_SASL_MECHANISM', 'sasl', 'mechanism'],
      ['KAFKA_SASL_USERNAME', 'sasl', 'username'],
      ['KAFKA_SASL_PASSWORD_FILE', 'sasl', 'password_file'],
    ] as const
  ).map(([variable, ...key]) => ({
    variable,
    path: ['environment', 'kafka_security', ...key],
    expected: 'non-empty text',
    parse: (text: string) => text,
  })),
];

/**
 * Variables that override the transaction batch of every stage and topic. They are not written
 * into the configuration tree: `resolveBatchSettings` reads them, because they rank above the
 * per-stage and per-topic entries, which the tree cannot express.
 */
export const BATCH_ENV = {
  size: 'KAFKA_TRANSACTION_BATCH_SIZE',
  timeoutMs: 'KAFKA_TRANSACTION_BATCH_TIMEOUT_MS',
} as const;

/** A config value taken from the environment. */
export interface EnvOverride {
  readonly variable: string;
  readonly path: readonly string[];
  readonly value: string | number;
}

/** The batch overrides from {@link BATCH_ENV}, each absent when its variable is unset. */
export interface BatchEnv {
  readonly size?: number;
  readonly timeoutMs?: number;
}

// An empty variable counts as unset, as compose files often declare `KAFKA_X=` without a value.
function read(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const text = env[variable]?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** Parses the config-tree overrides; a malformed value becomes an issue naming the variable. */
export function readConfigOverrides(env: NodeJS.ProcessEnv): {
  overrides: EnvOverride[];
  issues: ConfigIssue[];
} {
  const overrides: EnvOverride[] = [];
  const issues: ConfigIssue[] = [];
  for (const spec of CONFIG_ENV_OVERRIDES) {
    const text = read(env, spec.variable);
    if (text === undefined) continue;
    const value = spec.parse(text);
    if (value === undefined) {
      issues.push(
        makeIssue({
          path: spec.variable,
          expected: spec.expected,
          value: env[spec.variable],
          note: `overrides ${formatPath(spec.path)}`,
          origin: 'env',
        }),
      );
    } else overrides.push({ variable: spec.variable, path: spec.path, value });
  }
  return { overrides, issues };
}

/** Parses {@link BATCH_ENV}; a malformed value becomes an issue naming the variable. */
export function readBatchEnv(env: NodeJS.ProcessEnv): { batch: BatchEnv; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const parse = (variable: string, key: string): number | undefined => {
    const text = read(env, variable);
    if (text === undefined) return undefined;
    const value = positiveIntegerText(text);
    if (typeof value === 'number') return value;
    issues.push(
      makeIssue({
        path: variable,
        expected: 'positive integer',
        value: env[variable],
        note: `overrides environment.kafka_transaction_batch ${key} for every stage and topic`,
        origin: 'env',
      }),
    );
    return undefined;
  };
  const size = parse(BATCH_ENV.size, 'size');
  const timeoutMs = parse(BATCH_ENV.timeoutMs, 'timeout_ms');
  return {
    batch: { ...(size === undefined ? {} : { size }), ...(timeoutMs === undefined ? {} : { timeoutMs }) },
    issues,
  };
}

/**
 * Returns a copy of the parsed YAML tree with the overrides written in (missing parents created).
 * A document that is not a mapping is returned as it is, for validation to report.
 */
export function applyConfigOverrides(tree: unknown, overrides: readonly EnvOverride[]): unknown {
  if (overrides.length === 0 || typeof tree !== 'object' || tree === null || Array.isArray(tree)) return tree;
  const root: unknown = structuredClone(tree);
  for (const { path, value } of overrides) {
    let node = root;
    for (const [index, key] of path.entries()) {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) break;
      const object = node as Record<string, unknown>;
      if (index === path.length - 1) object[key] = value;
      else {
        // A wrong type in the file stays as it is, so that validation reports the file's value.
        object[key] ??= {};
        node = object[key];
      }
    }
  }
  return root;
}
