import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { resolveListenerTls, type ListenerTlsConfig } from '../../../src/config/listener-tls.ts';
import { createKafkaCertificates, type KafkaCertificates } from '../../../src/dev/kafka-tls.ts';
import { scrubSecrets } from '../../../src/errors/secrets.ts';
import { configErrorOf } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'listener-tls-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const PATH = ['pipeline', 'sensors', 0, 'dnstap', 'tls'];
let certs: KafkaCertificates;
let other: KafkaCertificates;
let ok: ListenerTlsConfig;

describe('listener TLS files resolved from the config', () => {
  before(() => {
    certs = createKafkaCertificates(join(dir, 'a'));
    other = createKafkaCertificates(join(dir, 'b'));
    ok = {
      certificate_file: join(certs.dir, 'broker.pem'),
      key_file: join(certs.dir, 'broker.key'),
      client_ca_file: certs.caCert,
    };
  });

  test('the files are read; a key and certificate in one PEM file serve as both', () => {
    const tls = resolveListenerTls(ok, PATH);
    assert.match(tls.cert.toString(), /BEGIN CERTIFICATE/);
    assert.match(tls.key.toString(), /PRIVATE KEY/);
    assert.match(tls.ca.toString(), /BEGIN CERTIFICATE/);
    assert.equal(tls.passphrase, undefined);
    const both = resolveListenerTls(
      { ...ok, certificate_file: certs.brokerKeystore, key_file: certs.brokerKeystore },
      PATH,
    );
    assert.ok(both.cert.equals(both.key));
  });

  test('each unusable file is a ConfigError naming its key path, never its content', () => {
    const missing = configErrorOf(() =>
      resolveListenerTls({ ...ok, client_ca_file: join(dir, 'nope.pem') }, PATH),
    );
    assert.match(
      missing.message,
      /^config\.yaml: pipeline\.sensors\[0\]\.dnstap\.tls\.client_ca_file: expected a readable PEM file \(the clients' CA certificate\), got ".*nope\.pem" \(ENOENT/,
    );
    const text = join(dir, 'not-pem.txt');
    writeFileSync(text, 'secret-looking text\n');
    const notPem = configErrorOf(() => resolveListenerTls({ ...ok, certificate_file: text }, PATH));
    assert.match(
      notPem.message,
      /dnstap\.tls\.certificate_file: expected a PEM file \(certificate\), got .* \(no "-----BEGIN" block\)/,
    );
    assert.doesNotMatch(notPem.message, /secret-looking/);
    const mismatched = configErrorOf(() =>
      resolveListenerTls({ ...ok, key_file: join(other.dir, 'broker.key') }, PATH),
    );
    assert.match(mismatched.message, /dnstap\.tls\.key_file: expected the private key of certificate_file/);
  });

  test('an encrypted key opens with key_password_file, which is registered as a secret', () => {
    const encrypted = join(dir, 'encrypted.key');
    const password = 'listener-key-password-71';
    execFileSync('openssl', [
      'pkey',
      '-in',
      join(certs.dir, 'broker.key'),
      '-aes256',
      '-passout',
      `pass:${password}`,
      '-out',
      encrypted,
    ]);
    const passwordFile = join(dir, 'key-password');
    writeFileSync(passwordFile, `${password}\n`);
    const tls = resolveListenerTls({ ...ok, key_file: encrypted, key_password_file: passwordFile }, PATH);
    assert.equal(tls.passphrase, password);
    assert.equal(scrubSecrets(`the password is ${password}`), 'the password is [REDACTED]');
    const noPassword = configErrorOf(() => resolveListenerTls({ ...ok, key_file: encrypted }, PATH));
    assert.match(
      noPassword.message,
      /dnstap\.tls\.key_file: expected the private key of certificate_file \(with key_password_file when it is encrypted\)/,
    );
    writeFileSync(passwordFile, 'wrong\n');
    const wrong = configErrorOf(() =>
      resolveListenerTls({ ...ok, key_file: encrypted, key_password_file: passwordFile }, PATH),
    );
    assert.match(wrong.message, /dnstap\.tls\.key_file: expected the private key/);
    assert.doesNotMatch(wrong.message, /wrong/);
  });
});
