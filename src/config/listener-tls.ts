import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { registerSecret } from '../errors/secrets.ts';
import { ConfigError, formatPath, makeIssue } from './errors.ts';
import { nonEmptyString } from './value-schemas.ts';

/**
 * TLS with client certificates (mutual TLS) for a listener the project opens to senders on other
 * machines (a sensor's dnstap over TCP). The listener presents `certificate_file`/`key_file` and
 * accepts only senders whose certificate `client_ca_file` signed: a sender without a certificate, or
 * with one from another CA, is refused during the handshake and nothing it sends is read. Keys and
 * passwords stay in files; the key password, if any, is read from `key_password_file` only.
 */
export const listenerTlsSchema = z.strictObject({
  /** The listener's certificate (PEM; a chain may follow it in the same file). */
  certificate_file: nonEmptyString(),
  /** Its private key (PEM); may be the same file as the certificate. */
  key_file: nonEmptyString(),
  /** A file holding the key's password (one line), when the key is encrypted. */
  key_password_file: nonEmptyString().optional(),
  /** PEM file of the CA(s) whose client certificates are accepted. */
  client_ca_file: nonEmptyString(),
});

export type ListenerTlsConfig = z.output<typeof listenerTlsSchema>;

/** The section's files, read: what `tls.createServer` takes. */
export interface ListenerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly passphrase?: string;
  readonly ca: Buffer;
}

function fail(path: readonly PropertyKey[], expected: string, value: unknown, note: string): never {
  throw new ConfigError('config.yaml', [makeIssue({ path: formatPath(path), expected, value, note })]);
}

function readPem(file: string, path: readonly PropertyKey[], what: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (e) {
    const reason = e instanceof Error ? (e.message.split(', ')[0] ?? e.message) : String(e);
    return fail(path, `a readable PEM file (${what})`, file, reason);
  }
  if (!data.includes('-----BEGIN ')) fail(path, `a PEM file (${what})`, file, 'no "-----BEGIN" block');
  return data;
}

/**
 * Reads the files `section` (at `path` in config.yaml) names and checks that the key opens with its
 * password and matches the certificate, so a mistake stops the start instead of every handshake.
 *
 * @throws ConfigError naming the key path and what was expected; never a file's content
 */
export function resolveListenerTls(section: ListenerTlsConfig, path: readonly PropertyKey[]): ListenerTls {
  const cert = readPem(section.certificate_file, [...path, 'certificate_file'], 'certificate');
  const key = readPem(section.key_file, [...path, 'key_file'], 'private key');
  const ca = readPem(section.client_ca_file, [...path, 'client_ca_file'], "the clients' CA certificate");
  let passphrase: string | undefined;
  if (section.key_password_file !== undefined) {
    const where = [...path, 'key_password_file'];
    let text: string;
    try {
      text = readFileSync(section.key_password_file, 'utf8');
    } catch (e) {
      const reason = e instanceof Error ? (e.message.split(', ')[0] ?? e.message) : String(e);
      return fail(where, 'a readable file holding the key password', section.key_password_file, reason);
    }
    passphrase = text.replace(/\r?\n$/, '');
    registerSecret(passphrase);
  }
  try {
    createSecureContext({ cert, key, ca, ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    fail(
      [...path, 'key_file'],
      'the private key of certificate_file (with key_password_file when it is encrypted)',
      section.key_file,
      reason,
    );
  }
  return { cert, key, ca, ...(passphrase !== undefined ? { passphrase } : {}) };
}
