import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { assertBindAllowed, endpointAccessToken, isLoopback } from '../../../src/config/endpoint-access.ts';
import { ConfigError } from '../../../src/config/errors.ts';
import { clearSecrets, scrubSecrets } from '../../../src/errors/secrets.ts';

afterEach(() => clearSecrets());

test('the token comes from HAMSTRING_ACCESS_TOKEN, then its _FILE variable, then endpoints.access_token_file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'token-'));
  writeFileSync(join(dir, 'a'), 'token-from-config-file\n');
  writeFileSync(join(dir, 'b'), 'token-from-env-file-0');
  const config = { access_token_file: join(dir, 'a') };
  assert.equal(endpointAccessToken(config, {}), 'token-from-config-file');
  assert.equal(
    endpointAccessToken(config, { HAMSTRING_ACCESS_TOKEN_FILE: join(dir, 'b') }),
    'token-from-env-file-0',
  );
  assert.equal(
    endpointAccessToken(config, { HAMSTRING_ACCESS_TOKEN: 'token-from-env-000000' }),
    'token-from-env-000000',
  );
  assert.equal(endpointAccessToken({}, {}), undefined);
  assert.equal(scrubSecrets('x token-from-config-file'), 'x [REDACTED]', 'registered as a secret');
});

test('a short token is refused without showing it; an unreadable file names its key', () => {
  assert.throws(
    () => endpointAccessToken({}, { HAMSTRING_ACCESS_TOKEN: 'short-one' }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message.includes('HAMSTRING_ACCESS_TOKEN: expected access token of at least 16 characters') &&
      !e.message.includes('short-one'),
  );
  assert.throws(
    () => endpointAccessToken({ access_token_file: '/nonexistent/t' }, {}),
    /endpoints\.access_token_file/,
  );
});

test('only loopback binds without a token', () => {
  for (const h of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost'])
    assert.equal(isLoopback(h), true, h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com']) assert.equal(isLoopback(h), false, h);
  assert.throws(
    () => assertBindAllowed('0.0.0.0', undefined, 'dashboard.host'),
    /dashboard\.host: expected a loopback/,
  );
  assertBindAllowed('0.0.0.0', 'token-0123456789abcdef', 'dashboard.host');
});
