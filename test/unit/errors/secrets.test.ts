import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { errorText } from '../../../src/errors/error-text.ts';
import { clearSecrets, REDACTED, registerSecret, scrubSecrets } from '../../../src/errors/secrets.ts';
import { scrubLine, secretSafeOptions } from '../../../src/observability/logger.ts';
import { captureLog } from '../../helpers/capture-log.ts';

afterEach(() => clearSecrets());

describe('secrets', () => {
  it('scrubs a registered secret in its raw, URL-encoded and JSON-escaped forms', () => {
    registerSecret('p@ss"w/rd');
    assert.equal(scrubSecrets('a p@ss"w/rd b'), `a ${REDACTED} b`);
    assert.equal(scrubSecrets(`x ${encodeURIComponent('p@ss"w/rd')} y`), `x ${REDACTED} y`);
    assert.equal(
      scrubLine(JSON.stringify({ msg: 'got p@ss"w/rd' })),
      JSON.stringify({ msg: `got ${REDACTED}` }),
    );
  });

  it('scrubs the password of any user:password@ URL even when it was never registered', () => {
    assert.equal(
      scrubSecrets('connect https://alice:hunter22@ch.example:8443/ failed'),
      `connect https://alice:${REDACTED}@ch.example:8443/ failed`,
    );
  });

  it('replaces the longest secret whole when one contains another', () => {
    registerSecret('abcd');
    registerSecret('abcdefgh');
    assert.equal(scrubSecrets('abcdefgh abcd'), `${REDACTED} ${REDACTED}`);
  });

  it('ignores values too short to be a secret worth scrubbing', () => {
    registerSecret('ab');
    assert.equal(scrubSecrets('ab cab'), 'ab cab');
  });

  it('errorText scrubs the message of an error that echoes its configuration', () => {
    registerSecret('s3cret-token');
    const e = new Error('auth failed with config {"sasl.password":"s3cret-token"}');
    assert.equal(errorText(e).includes('s3cret-token'), false);
    assert.match(errorText(e), /\[REDACTED\]/);
  });
});

describe('logger redaction', () => {
  it('redacts password, token and authorization fields, nested config keys included', async () => {
    const raw: string[] = [];
    const { log, lines } = captureLog({ ...secretSafeOptions() });
    log.info(
      {
        password: 'pw-one',
        token: 'tok-one',
        headers: { authorization: 'Bearer tok-two' },
        kafka: { 'sasl.password': 'pw-two', 'ssl.key.password': 'pw-three', sasl: { password: 'pw-four' } },
        clickhouse: { password: 'pw-five' },
      },
      'connecting',
    );
    await new Promise((r) => setImmediate(r));
    raw.push(JSON.stringify(lines));
    for (const secret of ['pw-one', 'tok-one', 'tok-two', 'pw-two', 'pw-three', 'pw-four', 'pw-five'])
      assert.equal(raw[0]?.includes(secret), false, `${secret} in ${raw[0]}`);
  });

  it('scrubs a registered secret inside a message string', async () => {
    registerSecret('kafka-sasl-secret');
    const { log, lines } = captureLog({ ...secretSafeOptions() });
    log.warn({ err: 'SASL auth with kafka-sasl-secret failed' }, 'client said kafka-sasl-secret');
    await new Promise((r) => setImmediate(r));
    assert.equal(JSON.stringify(lines).includes('kafka-sasl-secret'), false);
    assert.equal(lines[0]?.msg, `client said ${REDACTED}`);
  });
});
