import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * TLS and SASL listeners of a local cluster, for tests of secured clients. Each node keeps its
 * PLAINTEXT listener (inter-broker traffic, the cluster manager's own probes, tooling) and adds:
 * - SSL on brokerPort + 3: TLS with client certificates required (mTLS); the principal is the
 *   certificate's CN (`User:<CN>`);
 * - SASL_SSL on brokerPort + 4: TLS, then SCRAM-SHA-256/512 or PLAIN; the principal is the user.
 * Certificates come from openssl: one CA, a broker certificate valid for 127.0.0.1 and localhost,
 * and a client certificate; Kafka reads them as PEM (`ssl.keystore.type=PEM`). SCRAM users are
 * written into the metadata log when the storage is formatted (`--add-scram`).
 */

export const SSL_LISTENER_PORT_OFFSET = 3;
export const SASL_SSL_LISTENER_PORT_OFFSET = 4;

/** A SASL user of the local cluster (SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN alike). */
export interface LocalKafkaUser {
  name: string;
  password: string;
}

/** What {@link KafkaClusterSecurity} needs to start secured listeners. */
export interface KafkaClusterSecurity {
  /** Directory of the certificates (made by {@link createKafkaCertificates}). */
  certificates: KafkaCertificates;
  users: readonly LocalKafkaUser[];
  /**
   * Turns the ACL authorizer on. The PLAINTEXT listener's ANONYMOUS (controllers, inter-broker
   * traffic, the cluster manager) and these principals are super users; everyone else needs ACLs.
   */
  acls?: { superUsers: readonly string[] };
}

/** Files of a local CA and the certificates it signed (all PEM). */
export interface KafkaCertificates {
  dir: string;
  caCert: string;
  brokerKeystore: string;
  clientCert: string;
  clientKey: string;
  /** The CN of the client certificate, hence its principal `User:<clientName>`. */
  clientName: string;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
}

function signed(dir: string, name: string, subject: string, ca: string, extensions: string): void {
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`], dir);
  openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-days',
      '30',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
}

/**
 * A CA (`ca.pem`), a broker keystore (`broker-keystore.pem`: key and certificate, SAN 127.0.0.1 and
 * localhost) and a client certificate (`client.pem`, `client.key`, CN `clientName`) in `dir`.
 * Existing files are reused, so a restarted cluster keeps trusting the clients it trusted.
 */
export function createKafkaCertificates(dir: string, clientName = 'hamstring-client'): KafkaCertificates {
  mkdirSync(dir, { recursive: true });
  const certs: KafkaCertificates = {
    dir,
    caCert: join(dir, 'ca.pem'),
    brokerKeystore: join(dir, 'broker-keystore.pem'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    clientName,
  };
  if (existsSync(certs.brokerKeystore) && existsSync(certs.clientKey)) return certs;
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'ca.key'], dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-subj',
      '/CN=hamstring-test-ca',
      '-days',
      '30',
      '-out',
      'ca.pem',
    ],
    dir,
  );
  signed(
    dir,
    'broker',
    '/CN=localhost',
    'ca',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  signed(dir, 'client', `/CN=${clientName}`, 'ca', 'extendedKeyUsage=clientAuth\n');
  const brokerKey = readFileSync(join(dir, 'broker.key'), 'utf8');
  writeFileSync(certs.brokerKeystore, brokerKey + readFileSync(join(dir, 'broker.pem'), 'utf8'));
  return certs;
}

/** Bootstrap servers of one secured listener of every node. */
export function securedBootstrapOf(addresses: readonly { brokerPort: number }[], offset: number): string {
  return addresses.map((a) => `127.0.0.1:${a.brokerPort + offset}`).join(',');
}

/** The listeners and broker settings {@link KafkaClusterSecurity} adds to one node. */
export function securedListenerSettings(
  node: { brokerPort: number },
  security: KafkaClusterSecurity,
): { listeners: string; protocolMap: string; settings: Record<string, string> } {
  const c = security.certificates;
  const listeners =
    `SSL://127.0.0.1:${node.brokerPort + SSL_LISTENER_PORT_OFFSET},` +
    `SASL_SSL://127.0.0.1:${node.brokerPort + SASL_SSL_LISTENER_PORT_OFFSET}`;
  const plain = security.users.map((u) => `user_${u.name}="${u.password}"`).join(' ');
  const settings: Record<string, string> = {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': c.brokerKeystore,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': c.caCert,
    'listener.name.ssl.ssl.client.auth': 'required',
    // `User:CN=hamstring-client` would be the default; ACLs read better with the bare CN.
    'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+)$/$1/,DEFAULT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
    'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config':
      'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config':
      'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required ${plain};`,
  };
  if (security.acls !== undefined) {
    settings['authorizer.class.name'] = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';
    settings['super.users'] = ['User:ANONYMOUS', ...security.acls.superUsers].join(';');
    settings['allow.everyone.if.no.acl.found'] = 'false';
  }
  return { listeners, protocolMap: 'SSL:SSL,SASL_SSL:SASL_SSL', settings };
}

/** `kafka-storage format` arguments that create the SCRAM credentials of every user. */
export function scramFormatArgs(users: readonly LocalKafkaUser[]): string[] {
  return users.flatMap((u) =>
    ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((m) => [
      '--add-scram',
      `${m}=[name=${u.name},password=${u.password}]`,
    ]),
  );
}
