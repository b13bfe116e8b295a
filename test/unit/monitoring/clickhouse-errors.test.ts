import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clickhouseAccess } from '../../../src/config/clickhouse-access.ts';
import { clickhouseServerSchema } from '../../../src/config/clickhouse-schema.ts';
import { ConfigError } from '../../../src/config/errors.ts';
import { bindLiterals, ClickHouseUnavailable } from '../../../src/monitoring/clickhouse-connection.ts';
import { classifyClickHouseError } from '../../../src/monitoring/clickhouse-errors.ts';
import { isDataError } from '../../../src/monitoring/clickhouse-sink.ts';

function chError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyClickHouseError', () => {
  it('tells authentication, access, TLS, network and data failures apart', () => {
    assert.equal(classifyClickHouseError(chError('193', 'Wrong password for user u')), 'authentication');
    assert.equal(classifyClickHouseError(chError('516', 'u: Authentication failed')), 'authentication');
    assert.equal(classifyClickHouseError(chError('192', 'Unknown user x')), 'authentication');
    assert.equal(
      classifyClickHouseError(chError('164', 'Cannot execute query in readonly mode')),
      'access-denied',
    );
    assert.equal(classifyClickHouseError(chError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed')), 'tls');
    assert.equal(classifyClickHouseError(chError('ECONNREFUSED', 'connect ECONNREFUSED')), 'unreachable');
    assert.equal(classifyClickHouseError(chError('27', 'Cannot parse input')), 'rejected-row');
    assert.equal(classifyClickHouseError(chError('241', 'Memory limit exceeded')), 'server');
  });

  it('finds the code in the text (old servers) and through cause chains', () => {
    assert.equal(
      classifyClickHouseError(new Error('Code: 193, e.displayText() = DB::Exception: Wrong password')),
      'authentication',
    );
    const wrapped = new ClickHouseUnavailable('connect failed', {
      cause: chError('194', 'Password required'),
    });
    assert.equal(wrapped.kind, 'authentication');
    assert.equal(classifyClickHouseError(new Error('outer', { cause: wrapped })), 'authentication');
  });

  it('isDataError is the rejected-row kind', () => {
    assert.equal(isDataError(chError('27', 'x')), true);
    assert.equal(isDataError(chError('193', 'x')), false);
  });
});

describe('bindLiterals', () => {
  it('binds String placeholders as escaped literals; SQL in a value stays a value', () => {
    assert.equal(
      bindLiterals('SELECT 1 WHERE ip = {host:String}', { host: "x' OR 1=1 --\\" }),
      "SELECT 1 WHERE ip = 'x\\' OR 1=1 --\\\\'",
    );
  });

  it('refuses a placeholder without a value or of another type', () => {
    assert.throws(() => bindLiterals('SELECT {host:String}', {}), /no String value/);
    assert.throws(() => bindLiterals('SELECT {n:UInt8}', { n: '1' }), /no String value/);
  });
});

describe('clickhouseAccess', () => {
  const server = (extra: Record<string, unknown> = {}) =>
    clickhouseServerSchema.parse({ hostname: 'ch.example', port: 8443, ...extra });

  it('takes user and password from the environment first, then the password file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ch-access-'));
    writeFileSync(join(dir, 'pw'), 'from-file\n');
    const fromFile = clickhouseAccess(server({ user: 'cfg', password_file: join(dir, 'pw') }), {});
    assert.deepEqual(fromFile, { url: 'http://ch.example:8443', username: 'cfg', password: 'from-file' });
    const fromEnv = clickhouseAccess(server({ user: 'cfg', password_file: join(dir, 'pw') }), {
      CLICKHOUSE_USER: 'envuser',
      CLICKHOUSE_PASSWORD: 'from-env',
    });
    assert.equal(fromEnv.username, 'envuser');
    assert.equal(fromEnv.password, 'from-env');
  });

  it('uses https and reads the CA when tls is enabled', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ch-access-'));
    writeFileSync(join(dir, 'ca.pem'), 'PEM');
    const access = clickhouseAccess(server({ tls: { enabled: true, ca_file: join(dir, 'ca.pem') } }), {});
    assert.equal(access.url, 'https://ch.example:8443');
    assert.equal(access.ca?.toString(), 'PEM');
  });

  it('names the key or variable of an unreadable file', () => {
    assert.throws(
      () => clickhouseAccess(server({ password_file: '/nonexistent/pw' }), {}),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.includes('environment.monitoring.clickhouse_server.password_file') &&
        e.message.includes('readable password file'),
    );
    assert.throws(
      () => clickhouseAccess(server(), { CLICKHOUSE_PASSWORD_FILE: '/nonexistent/pw' }),
      /CLICKHOUSE_PASSWORD_FILE/,
    );
  });

  it('rejects an inline password key (strict schema)', () => {
    assert.throws(() => server({ password: 'inline' }), /password/);
  });
});
