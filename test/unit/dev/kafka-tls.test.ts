import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kafkaNodeAddresses, serverSettings } from '../../../src/dev/kafka-node-config.ts';
import { scramFormatArgs, type KafkaClusterSecurity } from '../../../src/dev/kafka-tls.ts';

const certificates = {
  dir: '/c',
  caCert: '/c/ca.pem',
  brokerKeystore: '/c/broker-keystore.pem',
  clientCert: '/c/client.pem',
  clientKey: '/c/client.key',
  clientName: 'hamstring-client',
};
const [node] = kafkaNodeAddresses(1, 29092);

test('without security a node keeps the plaintext listeners only', () => {
  const s = serverSettings({ node: node!, cluster: [node!], logDir: '/d' });
  assert.equal(s.listeners, 'PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093');
  assert.equal(s['authorizer.class.name'], undefined);
  assert.equal(s['ssl.keystore.location'], undefined);
});

test('security adds an mTLS listener at +3 and a SASL_SSL listener at +4, PEM stores, and ACLs when asked', () => {
  const security: KafkaClusterSecurity = {
    certificates,
    users: [{ name: 'alice', password: 'pw' }],
    acls: { superUsers: ['User:admin'] },
  };
  const s = serverSettings({ node: node!, cluster: [node!], logDir: '/d', security });
  assert.equal(
    s.listeners,
    'PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093,SSL://127.0.0.1:29095,SASL_SSL://127.0.0.1:29096',
  );
  assert.match(
    s['advertised.listeners'] ?? '',
    /SSL:\/\/127\.0\.0\.1:29095,SASL_SSL:\/\/127\.0\.0\.1:29096$/,
  );
  assert.match(s['listener.security.protocol.map'] ?? '', /,SSL:SSL,SASL_SSL:SASL_SSL$/);
  assert.equal(s['inter.broker.listener.name'], 'PLAINTEXT');
  assert.equal(s['ssl.keystore.type'], 'PEM');
  assert.equal(s['ssl.keystore.location'], '/c/broker-keystore.pem');
  assert.equal(s['listener.name.ssl.ssl.client.auth'], 'required');
  assert.equal(s['authorizer.class.name'], 'org.apache.kafka.metadata.authorizer.StandardAuthorizer');
  assert.equal(s['super.users'], 'User:ANONYMOUS;User:admin');
  assert.equal(s['allow.everyone.if.no.acl.found'], 'false');
});

test('SCRAM users are formatted in for both SCRAM mechanisms', () => {
  assert.deepEqual(scramFormatArgs([{ name: 'alice', password: 'pw' }]), [
    '--add-scram',
    'SCRAM-SHA-256=[name=alice,password=pw]',
    '--add-scram',
    'SCRAM-SHA-512=[name=alice,password=pw]',
  ]);
});
