import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A self-signed certificate for 127.0.0.1, made by openssl in `dir` as `server.crt` and
 * `server.key`. It names 127.0.0.1 as subjectAltName, so a client's hostname verification stays on;
 * the certificate is its own CA.
 */
export function selfSignedCertificate(dir: string, days = 2): { certFile: string; keyFile: string } {
  const certFile = join(dir, 'server.crt');
  const keyFile = join(dir, 'server.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      String(days),
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

/**
 * A ClickHouse users.xml: the passwordless `default` user on loopback only (the server manager's
 * readiness check logs in as it) and `user` with `password` (stored as its SHA-256).
 */
export function passwordUsersXml(user: string, password: string): string {
  const sha = createHash('sha256').update(password).digest('hex');
  const entry = (name: string, credential: string, networks: string) =>
    `<${name}>${credential}<networks>${networks}</networks><profile>default</profile><quota>default</quota></${name}>`;
  return [
    '<yandex><profiles><default></default></profiles><quotas><default></default></quotas><users>',
    entry('default', '<password></password>', '<ip>::1</ip><ip>127.0.0.1</ip>'),
    entry(user, `<password_sha256_hex>${sha}</password_sha256_hex>`, '<ip>::/0</ip>'),
    '</users></yandex>',
  ].join('\n');
}
