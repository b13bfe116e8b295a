import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { classifyKafkaError, syntheticKafkaError } from '../../../src/kafka/classify.ts';
import { code } from '../../../src/kafka/error-codes.ts';
import { credentialFailureOf, explainRefusal, watchCredentials } from '../../../src/kafka/refusal.ts';

// librdkafka 2.15's own lines, as the secured test cluster produced them.
const SASL_LINE =
  '[thrd:sasl_ssl://127.0.0.1:19564/bootstrap]: sasl_ssl://127.0.0.1:19564/bootstrap: SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 357ms in state AUTH_REQ)';
const TLS_LINE =
  '[thrd:sasl_ssl://127.0.0.1:19564/bootstrap]: sasl_ssl://127.0.0.1:19564/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified';
const CLIENT_CERT_LINE =
  '[thrd:ssl://127.0.0.1:19563/bootstrap]: ssl://127.0.0.1:19563/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert number 42 (after 0ms in state APIVERSION_QUERY)';
const REFUSED_LINE =
  '[thrd:127.0.0.1:1/bootstrap]: 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused';

test('refused credentials in librdkafka FAIL lines are authorization errors; other lines are not', () => {
  assert.equal(credentialFailureOf({ fac: 'FAIL', message: SASL_LINE })?.codeName, '_AUTHENTICATION');
  assert.equal(credentialFailureOf({ fac: 'FAIL', message: TLS_LINE })?.codeName, '_SSL');
  assert.equal(credentialFailureOf({ fac: 'FAIL', message: CLIENT_CERT_LINE })?.codeName, '_SSL');
  assert.equal(credentialFailureOf({ fac: 'FAIL', message: TLS_LINE })?.kind, 'authorization');
  assert.equal(credentialFailureOf({ fac: 'FAIL', message: REFUSED_LINE }), undefined);
  assert.equal(credentialFailureOf({ fac: 'SASL', message: SASL_LINE }), undefined);
});

test('a guarded call rejects at the first refusal, and every later call at once', async () => {
  const client = new EventEmitter();
  const watch = watchCredentials(client);
  const pending = watch.guard(new Promise<void>(() => undefined));
  client.emit('event.log', { fac: 'FAIL', message: SASL_LINE });
  await assert.rejects(pending, /SASL authentication error/);
  await assert.rejects(watch.guard(Promise.resolve(1)), /SASL authentication error/);
  assert.equal(watch.failure()?.codeName, '_AUTHENTICATION');
});

test('an authorization error names the principal, the operation and the resource', () => {
  const c = {
    principal: 'User:alice',
    groupId: 'g',
    transactionalId: 'g-0',
    inputs: ['in'],
    outputs: ['out'],
  };
  const group = explainRefusal(syntheticKafkaError('GROUP_AUTHORIZATION_FAILED', 'consume'), c);
  assert.match(group.message, /^User:alice may not READ on GROUP g: injected/);
  const txn = explainRefusal(
    syntheticKafkaError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'init-transactions'),
    c,
  );
  assert.match(txn.message, /^User:alice may not WRITE on TRANSACTIONAL_ID g-0/);
  const write = explainRefusal(syntheticKafkaError('TOPIC_AUTHORIZATION_FAILED', 'produce'), c);
  assert.match(write.message, /^User:alice may not WRITE on TOPIC out/);
  const read = explainRefusal(syntheticKafkaError('TOPIC_AUTHORIZATION_FAILED', 'consume'), c);
  assert.match(read.message, /^User:alice may not READ or DESCRIBE on TOPIC in, out/);
  assert.equal(group.kind, 'authorization');
  const transport = syntheticKafkaError('_TRANSPORT', 'connect');
  assert.equal(explainRefusal(transport, c), transport);
});

test('a refused transaction names every topic the worker writes in it: dead-letter, retry and changelog topics too', () => {
  // AddPartitionsToTxn refused: the broker does not say which topic, so the message lists each one
  // the transaction may hold; a changelog's missing WRITE must not read as the outputs' alone.
  const c = {
    principal: 'User:alice',
    groupId: 'g',
    inputs: ['in'],
    outputs: ['out'],
    alsoWritten: ['in.DLT', 'g-counts-changelog'],
  };
  const commit = explainRefusal(syntheticKafkaError('TOPIC_AUTHORIZATION_FAILED', 'commit-transaction'), c);
  assert.match(commit.message, /^User:alice may not WRITE on TOPIC out, in\.DLT, g-counts-changelog: /);
  // The same refusal reported by the offsets' call: still the written topics, not READ on the inputs.
  const offsets = explainRefusal(
    classifyKafkaError(
      {
        code: code('TOPIC_AUTHORIZATION_FAILED'),
        message:
          'Failed to add partition(s) to transaction on broker TxnCoordinator/1: Broker: Topic authorization failed',
      },
      'send-offsets',
    ),
    c,
  );
  assert.match(offsets.message, /^User:alice may not WRITE on TOPIC out, in\.DLT, g-counts-changelog: /);
});
