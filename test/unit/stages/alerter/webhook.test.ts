import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { validateConfig } from '../../../../src/config/index.ts';
import {
  createWebhookSink,
  WebhookRefusedError,
  WebhookUnavailableError,
} from '../../../../src/stages/alerter/webhook.ts';
import { errorText } from '../../../../src/errors/error-text.ts';
import { minimalConfig, withValue } from '../../config/helpers.ts';
import { selfSignedCertificate } from '../../../helpers/tls-files.ts';
import { jsonRecord, stageContext } from '../../../support/stage-context.ts';

// A real HTTP endpoint on localhost whose answers the tests choose.
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let answers: number[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    received.push({ headers: req.headers, body });
    res.statusCode = answers.shift() ?? 200;
    res.end();
  });
});
let url = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
after(() => server.close());

const sink = () =>
  createWebhookSink({
    config: validateConfig(
      withValue(minimalConfig(), ['pipeline', 'alerting'], {
        log_to_kafka: true,
        webhook: { url, headers: { authorization: 'Bearer t' }, timeout_ms: 2000 },
      }),
      { env: {} },
    ),
  });
const alert = (id: string) => ({
  alert_id: id,
  overall_score: 0.9,
  result: [],
  src_ip: '10.0.0.1',
  alert_timestamp: '2026-11-30T00:00:00.000Z',
  suspicious_batch_id: id,
  detector_name: 'd',
});

test('the webhook needs the external topic: without log_to_kafka the config is refused', () => {
  assert.throws(
    () =>
      validateConfig(withValue(minimalConfig(), ['pipeline', 'alerting'], { webhook: { url: 'http://x' } }), {
        env: {},
      }),
    /pipeline\.alerting\.log_to_kafka: expected true/,
  );
});

test('each alert is POSTed as JSON with its id as Idempotency-Key, from the external topic', async () => {
  received.length = 0;
  answers = [200, 204];
  const stage = sink();
  assert.deepEqual(stage.inputTopics, ['hamstring_alerts']);
  const result = await stage.process(
    [jsonRecord('hamstring_alerts', 0, alert('a1')), jsonRecord('hamstring_alerts', 1, alert('a2'))],
    stageContext(),
  );
  assert.deepEqual(result.failures, []);
  assert.deepEqual(
    received.map((r) => r.headers['idempotency-key']),
    ['a1', 'a2'],
  );
  assert.equal(received[0]?.headers.authorization, 'Bearer t');
  assert.equal((JSON.parse(received[0]?.body ?? '{}') as { alert_id: string }).alert_id, 'a1');
});

test('a 503 fails the record as retryable and the rest of its partition with it, without POSTing them', async () => {
  received.length = 0;
  answers = [503];
  const result = await sink().process(
    [
      jsonRecord('hamstring_alerts', 0, alert('a1')),
      jsonRecord('hamstring_alerts', 1, alert('a2')),
      jsonRecord('hamstring_alerts', 0, alert('b1'), null, 1),
    ],
    stageContext(),
  );
  assert.equal(received.length, 2, 'partition 0 stopped after its failure; partition 1 went on');
  assert.deepEqual(
    result.failures?.map((f) => [f.record.partition, f.record.offset]),
    [
      [0, 0],
      [0, 1],
    ],
  );
  for (const f of result.failures ?? []) assert.ok(f.error instanceof WebhookUnavailableError);
});

test('a 400 is refused for good (dead-lettered at once) and does not stop the partition', async () => {
  received.length = 0;
  answers = [400, 200];
  const result = await sink().process(
    [jsonRecord('hamstring_alerts', 0, alert('a1')), jsonRecord('hamstring_alerts', 1, alert('a2'))],
    stageContext(),
  );
  assert.equal(received.length, 2);
  assert.equal(result.failures?.length, 1);
  const error = result.failures?.[0]?.error;
  assert.ok(error instanceof WebhookRefusedError);
  assert.equal(error.retryable, false);
  assert.equal(error.status, 400);
});

test('an unreachable endpoint is a retryable failure', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const stage = createWebhookSink({
    config: validateConfig(
      withValue(minimalConfig(), ['pipeline', 'alerting'], {
        log_to_kafka: true,
        webhook: { url: `http://127.0.0.1:${port}/` },
      }),
      { env: {} },
    ),
  });
  const result = await stage.process([jsonRecord('hamstring_alerts', 0, alert('a1'))], stageContext());
  assert.ok(result.failures?.[0]?.error instanceof WebhookUnavailableError);
});

test('webhook TLS: it refuses a server whose certificate is not trusted, and its error shows neither the path nor the token', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
  selfSignedCertificate(dir, 1);
  let reached = 0;
  const server = https.createServer(
    { key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) },
    (_req, res) => {
      reached += 1;
      res.end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const stage = createWebhookSink({
      config: validateConfig(
        withValue(minimalConfig(), ['pipeline', 'alerting'], {
          log_to_kafka: true,
          webhook: {
            url: `https://127.0.0.1:${port}/services/T0/B0/SecretPathPart?token=query-token-123456`,
            headers: { Authorization: 'Bearer header-token-123456' },
            timeout_ms: 5000,
          },
        }),
        { env: {} },
      ),
    });
    const result = await stage.process([jsonRecord('hamstring_alerts', 0, alert('a1'))], stageContext());
    assert.equal(reached, 0);
    const error = result.failures?.[0]?.error;
    assert.ok(error instanceof WebhookUnavailableError);
    assert.match(error.message, /certificate/i);
    for (const secret of ['SecretPathPart', 'query-token-123456', 'header-token-123456'])
      assert.equal(errorText(error).includes(secret), false, secret);
  } finally {
    server.close();
  }
});
