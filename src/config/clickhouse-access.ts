import { readFileSync } from 'node:fs';
import { registerSecret } from '../errors/secrets.ts';
import type { ClickHouseServerConfig } from './clickhouse-schema.ts';
import { ConfigError, makeIssue } from './errors.ts';

/** Environment variables of the ClickHouse login; they are final over config.yaml. */
export const CLICKHOUSE_ENV = {
  user: 'CLICKHOUSE_USER',
  password: 'CLICKHOUSE_PASSWORD',
  passwordFile: 'CLICKHOUSE_PASSWORD_FILE',
  caFile: 'CLICKHOUSE_CA_FILE',
} as const;

const KEY = 'environment.monitoring.clickhouse_server';

/** How to reach and log in to ClickHouse, with the secrets read. */
export interface ClickHouseAccess {
  /** `http://host:port` or `https://host:port`. */
  url: string;
  username?: string;
  password?: string;
  /** PEM of the CA to trust for HTTPS. */
  ca?: Buffer;
}

/**
 * The URL of every server to use, in the order to try them: `hostname:port`, then, in a replicated
 * layout, each of `replication.replicas` (http or https after `tls.enabled`, the same for all).
 */
export function clickhouseServerUrls(server: ClickHouseServerConfig): string[] {
  const scheme = server.tls.enabled ? 'https' : 'http';
  return [{ hostname: server.hostname, port: server.port }, ...(server.replication?.replicas ?? [])].map(
    ({ hostname, port }) => `${scheme}://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
  );
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function readSecretFile(path: string, where: string, origin: 'file' | 'env'): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    const reason = e instanceof Error ? (e.message.split(', ')[0] ?? e.message) : String(e);
    throw new ConfigError('config.yaml', [
      makeIssue({ path: where, expected: 'readable password file', value: path, note: reason, origin }),
    ]);
  }
}

function readCa(path: string, where: string, origin: 'file' | 'env'): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const reason = e instanceof Error ? (e.message.split(', ')[0] ?? e.message) : String(e);
    throw new ConfigError('config.yaml', [
      makeIssue({ path: where, expected: 'readable PEM CA file', value: path, note: reason, origin }),
    ]);
  }
}

/**
 * Resolves the login and TLS settings: user from CLICKHOUSE_USER, else `user`; password from
 * CLICKHOUSE_PASSWORD, else the file named by CLICKHOUSE_PASSWORD_FILE, else by `password_file`;
 * CA from CLICKHOUSE_CA_FILE, else `tls.ca_file`. The password is registered as a secret, so no log
 * line or error text can show it.
 *
 * @throws ConfigError naming the key or variable when a file cannot be read.
 */
export function clickhouseAccess(
  server: ClickHouseServerConfig,
  env: NodeJS.ProcessEnv = process.env,
): ClickHouseAccess {
  const username = envValue(env, CLICKHOUSE_ENV.user) ?? server.user;
  const passwordFileEnv = envValue(env, CLICKHOUSE_ENV.passwordFile);
  const password =
    envValue(env, CLICKHOUSE_ENV.password) ??
    (passwordFileEnv !== undefined
      ? readSecretFile(passwordFileEnv, CLICKHOUSE_ENV.passwordFile, 'env')
      : server.password_file !== undefined
        ? readSecretFile(server.password_file, `${KEY}.password_file`, 'file')
        : undefined);
  registerSecret(password);
  const caFileEnv = envValue(env, CLICKHOUSE_ENV.caFile);
  const ca =
    caFileEnv !== undefined
      ? readCa(caFileEnv, CLICKHOUSE_ENV.caFile, 'env')
      : server.tls.ca_file !== undefined
        ? readCa(server.tls.ca_file, `${KEY}.tls.ca_file`, 'file')
        : undefined;
  return {
    url: clickhouseServerUrls(server)[0] ?? '',
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
}
