import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { registerSecret } from '../errors/secrets.ts';
import type { EndpointsConfig } from './endpoint-schema.ts';
import { ConfigError, makeIssue } from './errors.ts';

/** Environment variables of the endpoints' access token; they are final over config.yaml. */
export const ACCESS_TOKEN_ENV = {
  token: 'HAMSTRING_ACCESS_TOKEN',
  file: 'HAMSTRING_ACCESS_TOKEN_FILE',
} as const;

/** A token shorter than this is refused: it could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

function fail(path: string, expected: string, value: unknown, origin: 'file' | 'env', note?: string): never {
  throw new ConfigError('config.yaml', [
    makeIssue({ path, expected, value, origin, ...(note !== undefined ? { note } : {}) }),
  ]);
}

function readTokenFile(path: string, where: string, origin: 'file' | 'env'): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    const reason = e instanceof Error ? (e.message.split(', ')[0] ?? e.message) : String(e);
    return fail(where, 'readable access token file', path, origin, reason);
  }
}

/**
 * The endpoints' access token: HAMSTRING_ACCESS_TOKEN, else the file HAMSTRING_ACCESS_TOKEN_FILE
 * names, else `endpoints.access_token_file`; undefined when none is set. Registered as a secret.
 *
 * @throws ConfigError when the file cannot be read or the token is shorter than {@link MIN_TOKEN_LENGTH}
 * (the value is never shown, only its length).
 */
export function endpointAccessToken(
  endpoints: Pick<EndpointsConfig, 'access_token_file'>,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const fromEnv = env[ACCESS_TOKEN_ENV.token];
  const fileEnv = env[ACCESS_TOKEN_ENV.file];
  let token: string | undefined;
  let where: string;
  let origin: 'file' | 'env' = 'env';
  if (fromEnv !== undefined && fromEnv !== '') {
    token = fromEnv;
    where = ACCESS_TOKEN_ENV.token;
  } else if (fileEnv !== undefined && fileEnv !== '') {
    token = readTokenFile(fileEnv, ACCESS_TOKEN_ENV.file, 'env');
    where = ACCESS_TOKEN_ENV.file;
  } else if (endpoints.access_token_file !== undefined) {
    where = 'endpoints.access_token_file';
    origin = 'file';
    token = readTokenFile(endpoints.access_token_file, where, origin);
  } else return undefined;
  registerSecret(token);
  if (token.trim().length < MIN_TOKEN_LENGTH)
    fail(
      where,
      `access token of at least ${MIN_TOKEN_LENGTH} characters`,
      `${token.length} characters`,
      origin,
    );
  return token;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Refuses to serve on a non-loopback address without an access token.
 *
 * @param key - the config key (or option) that set `host`, named in the error.
 * @throws ConfigError
 */
export function assertBindAllowed(host: string, token: string | undefined, key: string): void {
  if (token !== undefined || isLoopback(host)) return;
  fail(
    key,
    `a loopback address (127.0.0.1, ::1, localhost) unless an access token is set (${ACCESS_TOKEN_ENV.token}, ${ACCESS_TOKEN_ENV.file} or endpoints.access_token_file)`,
    host,
    'file',
  );
}
