import { readFileSync } from 'node:fs';
import { normalize, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { translateCompat, type ConfigWarning } from './compat.ts';
import { applyConfigOverrides, readBatchEnv, readConfigOverrides } from './env-overrides.ts';
import type { ConfigIssue } from './errors.ts';
import { ConfigError, formatPath, makeIssue } from './errors.ts';
import type { HamstringConfig } from './schema.ts';
import { hamstringConfigSchema } from './schema.ts';
import { parseWithSchema } from './zod-issues.ts';

/** Environment variable naming the config file when no path is passed. */
export const CONFIG_PATH_ENV = 'HAMSTRING_CONFIG';
export const DEFAULT_CONFIG_PATH = 'config.yaml';

/** Where the configuration comes from. */
export interface LoadConfigOptions {
  /** File to read; defaults to `$HAMSTRING_CONFIG`, then `./config.yaml`. With `text`, only its label. */
  path?: string;
  /** YAML text to use instead of reading a file. */
  text?: string;
  /** Environment for the overrides; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Reads, parses and validates config.yaml, applies the environment overrides and fills in the
 * defaults. A Python HAMSTRING config is read as it is: what is done differently is listed by
 * {@link configWarnings}. Also validates KAFKA_TRANSACTION_BATCH_SIZE / _TIMEOUT_MS so that a bad value fails
 * at start rather than at the first batch.
 *
 * @throws {@link ConfigError} listing every problem: unreadable file, YAML syntax, schema
 * violations, malformed environment variables.
 */
export function loadConfig(opts: LoadConfigOptions = {}): HamstringConfig {
  const env = opts.env ?? process.env;
  const fromEnv = opts.path === undefined && opts.text === undefined ? env[CONFIG_PATH_ENV] : undefined;
  const path = opts.path ?? (fromEnv || DEFAULT_CONFIG_PATH);
  const source = normalize(path);
  const text =
    opts.text ?? readConfigFile(path, source, fromEnv ? `path from ${CONFIG_PATH_ENV}` : undefined);
  return validateConfig(parseYaml(text, source), { env, source });
}

/**
 * Validates an already parsed configuration tree (for example an object built in a test), with
 * the same environment overrides and errors as {@link loadConfig}.
 *
 * @param options.source - label used in error lines; defaults to `config.yaml`.
 * @throws {@link ConfigError}
 */
export function validateConfig(
  tree: unknown,
  options: { env?: NodeJS.ProcessEnv; source?: string } = {},
): HamstringConfig {
  const env = options.env ?? process.env;
  const source = options.source ?? DEFAULT_CONFIG_PATH;
  const { overrides, issues: overrideIssues } = readConfigOverrides(env);
  const { issues: batchIssues } = readBatchEnv(env);
  const compat = translateCompat(tree);
  const result = parseWithSchema(hamstringConfigSchema, applyConfigOverrides(compat.tree, overrides));
  const schemaIssues = result.ok
    ? []
    : result.issues.map((issue) => {
        const override = overrides.find((candidate) => formatPath(candidate.path) === issue.path);
        return override ? { ...issue, message: `${issue.message} (value from ${override.variable})` } : issue;
      });
  const issues = [...overrideIssues, ...batchIssues, ...schemaIssues];
  if (issues.length > 0 || !result.ok) throw new ConfigError(source, issues);
  WARNINGS.set(result.data, compat.warnings);
  return result.data;
}

const WARNINGS = new WeakMap<HamstringConfig, readonly ConfigWarning[]>();

/**
 * The settings of a loaded config that are read differently from what they say (a Python
 * HAMSTRING config: a lookaround pattern rewritten, a model that cannot run replaced, a section
 * ignored), each with its key path and what is done instead. Empty for a config not made by
 * {@link loadConfig} or {@link validateConfig} (a copy included).
 */
export function configWarnings(config: HamstringConfig): readonly ConfigWarning[] {
  return WARNINGS.get(config) ?? [];
}

/**
 * The `bootstrap.servers` list: `environment.kafka_bootstrap_servers` when set (also via
 * KAFKA_BOOTSTRAP_SERVERS), otherwise every broker's `hostname:external_port`, comma-separated.
 */
export function bootstrapServers(config: HamstringConfig): string {
  const { kafka_bootstrap_servers: override, kafka_brokers: brokers } = config.environment;
  if (override !== undefined) return override;
  return brokers
    .map(({ hostname, external_port }) => {
      const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
      return `${host}:${external_port}`;
    })
    .join(',');
}

function readConfigFile(path: string, source: string, note: string | undefined): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    // Node's message is "ENOENT: no such file or directory, open '<path>'"; the path is printed anyway.
    const reason = error instanceof Error ? (error.message.split(', ')[0] ?? error.message) : String(error);
    throw new ConfigError(source, [
      makeIssue({
        path: '',
        expected: 'readable config file',
        value: resolve(path),
        note: note === undefined ? reason : `${reason}; ${note}`,
      }),
    ]);
  }
}

function parseYaml(text: string, source: string): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    const lines = text.split(/\r?\n/);
    throw new ConfigError(
      source,
      document.errors.map((error): ConfigIssue => {
        const position = error.linePos?.[0];
        const reason = (error.message.split('\n')[0] ?? error.message).replace(
          / at line \d+, column \d+:?$/,
          '',
        );
        const issue = makeIssue({
          path: '',
          expected: `valid YAML (${reason})`,
          value: position === undefined ? '' : (lines[position.line - 1] ?? ''),
        });
        return position === undefined ? issue : { ...issue, line: position.line, column: position.col };
      }),
    );
  }
  return document.toJS() as unknown;
}
