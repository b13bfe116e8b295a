import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ConfigError,
  kafkaSecurityFromEnv,
  loadConfig,
  resolveKafkaSecurity,
} from '../../../src/config/index.ts';
import { clearSecrets, scrubSecrets } from '../../../src/errors/secrets.ts';
import { securityProperties } from '../../../src/kafka/security.ts';
import { shippedConfigText } from './helpers.ts';

const withSecurity = (yaml: string) =>
  shippedConfigText().replace(/^environment:\n/m, `environment:\n  kafka_security:\n${yaml}`);
const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => loadConfig({ text: withSecurity(yaml), env });
const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  assert.fail('no ConfigError');
};
const dir = mkdtempSync(join(tmpdir(), 'kafka-security-'));
const passwordFile = join(dir, 'password');
writeFileSync(passwordFile, 'from-the-file\n');

test('without kafka_security every client connects in PLAINTEXT, with no security property', () => {
  const config = loadConfig({ text: shippedConfigText(), env: {} });
  const security = resolveKafkaSecurity(config.environment.kafka_security, {});
  assert.equal(security.protocol, 'PLAINTEXT');
  assert.deepEqual(securityProperties(security), {});
});

test('SASL_SSL with SCRAM: the password comes from the file, hostname verification stays on', () => {
  const config = load(
    [
      '    protocol: SASL_SSL',
      '    ca_file: /etc/kafka/ca.pem',
      '    sasl:',
      '      mechanism: SCRAM-SHA-256',
      '      username: hamstring',
      `      password_file: ${passwordFile}`,
      '',
    ].join('\n'),
  );
  const security = resolveKafkaSecurity(config.environment.kafka_security, {});
  assert.deepEqual(securityProperties(security), {
    'security.protocol': 'sasl_ssl',
    'ssl.endpoint.identification.algorithm': 'https',
    'ssl.ca.location': '/etc/kafka/ca.pem',
    'sasl.mechanisms': 'SCRAM-SHA-256',
    'sasl.username': 'hamstring',
    'sasl.password': 'from-the-file',
  });
});

test('KAFKA_SASL_PASSWORD wins over the password file; KAFKA_SECURITY_PROTOCOL and KAFKA_SASL_USERNAME override the file', () => {
  const yaml = `    protocol: SASL_PLAINTEXT\n    sasl:\n      username: file-user\n      password_file: ${passwordFile}\n`;
  const env = {
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SASL_USERNAME: 'env-user',
    KAFKA_SASL_PASSWORD: 'from-env',
  };
  const security = resolveKafkaSecurity(load(yaml, env).environment.kafka_security, env);
  assert.equal(security.protocol, 'SASL_SSL');
  assert.deepEqual(security.sasl, { mechanism: 'SCRAM-SHA-512', username: 'env-user', password: 'from-env' });
});

test('mTLS: certificate, key and the key password from its file', () => {
  const yaml = `    protocol: SSL\n    verify_hostname: false\n    certificate_file: /c.pem\n    key_file: /k.pem\n    key_password_file: ${passwordFile}\n`;
  const props = securityProperties(resolveKafkaSecurity(load(yaml).environment.kafka_security, {}));
  assert.equal(props['ssl.endpoint.identification.algorithm'], 'none');
  assert.equal(props['ssl.certificate.location'], '/c.pem');
  assert.equal(props['ssl.key.location'], '/k.pem');
  assert.equal(props['ssl.key.password'], 'from-the-file');
  assert.equal(props['sasl.username'], undefined);
});

test('errors name the key path and the expected value', () => {
  assert.match(
    messageOf(() => load('    protocol: TLS\n')),
    /environment\.kafka_security\.protocol: expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got "TLS"/,
  );
  assert.match(
    messageOf(() => load('    protocol: SASL_SSL\n')),
    /environment\.kafka_security\.sasl: expected a sasl section \(mechanism, username\) for protocol SASL_SSL/,
  );
  assert.match(
    messageOf(() => load('    protocol: SSL\n    certificate_file: /c.pem\n')),
    /environment\.kafka_security\.key_file: expected a PEM file/,
  );
  assert.match(
    messageOf(() => load('    protocol: SSL\n    password: inline\n')),
    /environment\.kafka_security/,
  );
  assert.match(
    messageOf(() => load('    sasl:\n      username: u\n')),
    /environment\.kafka_security\.protocol: expected SASL_PLAINTEXT or SASL_SSL when a sasl section is set/,
  );
  assert.match(
    messageOf(() => load('    protocol: SASL_SSL\n    sasl:\n      mechanism: GSSAPI\n      username: u\n')),
    /environment\.kafka_security\.sasl\.mechanism: expected one of SCRAM-SHA-256, SCRAM-SHA-512, PLAIN/,
  );
});

test('a SASL protocol without any password source names the key to set; an unreadable file names it', () => {
  const config = load('    protocol: SASL_SSL\n    sasl:\n      username: u\n');
  assert.match(
    messageOf(() => resolveKafkaSecurity(config.environment.kafka_security, {})),
    /environment\.kafka_security\.sasl\.password_file: expected a password file \(or KAFKA_SASL_PASSWORD \/ KAFKA_SASL_PASSWORD_FILE\), got nothing/,
  );
  const missing = load(
    `    protocol: SASL_SSL\n    sasl:\n      username: u\n      password_file: ${join(dir, 'nope')}\n`,
  );
  assert.match(
    messageOf(() => resolveKafkaSecurity(missing.environment.kafka_security, {})),
    /environment\.kafka_security\.sasl\.password_file: expected a readable file, got ".*nope" \(ENOENT/,
  );
});

test('a process without config.yaml takes its settings from the environment, errors naming the variable', () => {
  assert.equal(kafkaSecurityFromEnv({}).protocol, 'PLAINTEXT');
  const s = kafkaSecurityFromEnv({
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SASL_USERNAME: 'w',
    KAFKA_SASL_PASSWORD_FILE: passwordFile,
    KAFKA_SSL_CA_FILE: '/ca.pem',
  });
  assert.deepEqual(s.sasl, { mechanism: 'SCRAM-SHA-512', username: 'w', password: 'from-the-file' });
  assert.equal(s.caFile, '/ca.pem');
  assert.match(
    messageOf(() => kafkaSecurityFromEnv({ KAFKA_SECURITY_PROTOCOL: 'sasl' })),
    /^env: KAFKA_SECURITY_PROTOCOL: expected one of PLAINTEXT/,
  );
});

test('the shipped config.yaml and examples put no password inline', () => {
  assert.doesNotMatch(shippedConfigText(), /^\s*(sasl_)?password\s*:/m);
});

test('the SASL and key passwords are scrubbed from any text once read, as every other secret is', () => {
  clearSecrets();
  const config = load(
    [
      '    protocol: SASL_SSL',
      '    certificate_file: /etc/kafka/client.pem',
      '    key_file: /etc/kafka/client.key',
      '    sasl:',
      '      mechanism: SCRAM-SHA-512',
      '      username: hamstring',
      `      password_file: ${passwordFile}`,
      '',
    ].join('\n'),
  );
  resolveKafkaSecurity(config.environment.kafka_security, { KAFKA_SSL_KEY_PASSWORD: 'key-pass-42' });
  const echoed = scrubSecrets("sasl.password=from-the-file ssl.key.password='key-pass-42'");
  assert.equal(echoed.includes('from-the-file') || echoed.includes('key-pass-42'), false, echoed);
  clearSecrets();
});
