import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { validateConfig } from '../../../../src/config/index.ts';
import { DecodeError } from '../../../../src/runtime/index.ts';
import {
  alertToEcs,
  createSyslogSink,
  SyslogUnavailableError,
  tcpTransport,
  udpTransport,
  type OutgoingAlert,
  type SyslogTransport,
} from '../../../../src/stages/alerter/index.ts';
import { asciiJson, octetCounted, syslogMessage } from '../../../../src/stages/alerter/syslog-message.ts';
import { freePort } from '../../../helpers/free-port.ts';
import { minimalConfig, withValue } from '../../config/helpers.ts';
import { jsonRecord, stageContext } from '../../../support/stage-context.ts';

const line = (domain: string, ts: string) => ({
  logline_id: domain,
  subnet_id: '10.0.0.0_24',
  ts,
  src_ip: '10.0.0.5',
  domain_name: domain,
  status_code: 'NXDOMAIN',
  record_type: 'A',
  dns_server_ip: '192.168.2.53',
});
const alert = (id: string, names = 3): OutgoingAlert => ({
  alert_id: id,
  overall_score: 0.97,
  result: Array.from({ length: names }, (_, i) => ({
    request: line(`n${i}x${'q'.repeat(20)}.com`, `2026-11-30T00:00:0${i % 10}.000000Z`),
    probability: 0.9 + i / 1000,
  })),
  src_ip: '10.0.0.5',
  alert_timestamp: '2026-11-30T00:01:00.123Z',
  suspicious_batch_id: 'b',
  detector_name: 'dga_detector',
  window_start: '2026-11-30T00:00:00.000Z',
  window_end: '2026-11-30T00:05:00.000Z',
  kind: 'hash DGA',
  kind_confidence: 0.8,
});

const configWith = (syslog: object) =>
  validateConfig(withValue(minimalConfig(), ['pipeline', 'alerting'], { log_to_kafka: true, syslog }), {
    env: {},
  });

test('an RFC 5424 message: PRI, version, header fields, escaped structured data, then the body', () => {
  const message = syslogMessage(
    { facility: 16, severity: 4, hostname: 'sensor 1', appName: 'hamstring', procId: '42', msgId: '' },
    '2026-11-30T00:01:00.123Z',
    'hamstring@32473',
    [
      ['alertId', 'a"b]c\\d'],
      ['score', '0.9'],
    ],
    '{"x":1}',
  );
  assert.equal(
    message,
    '<132>1 2026-11-30T00:01:00.123Z sensor_1 hamstring 42 - [hamstring@32473 alertId="a\\"b\\]c\\\\d" score="0.9"] {"x":1}',
  );
  assert.match(
    syslogMessage(
      { facility: 0, severity: 0, hostname: 'h', appName: 'a', procId: '-', msgId: 'm' },
      'yesterday',
      'x@1',
      [],
      '',
    ),
    /^<0>1 - h a - m \[x@1\] $/,
  );
  assert.deepEqual(octetCounted('<1>1 é'), Buffer.from('7 <1>1 é'));
  const json = asciiJson({ name: 'münchen.de', del: '\u007f' });
  assert.match(json, /^[\x20-\x7e]+$/);
  assert.deepEqual(JSON.parse(json), { name: 'münchen.de', del: '\u007f' });
});

test('ECS: time, host, domains, scores, family attribution and the ATT&CK technique of the detector', () => {
  const ecs = alertToEcs(alert('a1'), { detectorClass: 'DGADetector', observerHostname: 'obs' }) as Record<
    string,
    Record<string, unknown>
  >;
  assert.equal(ecs['@timestamp'], '2026-11-30T00:01:00.123Z');
  assert.deepEqual(ecs.ecs, { version: '8.11.0' });
  assert.equal(ecs.event?.kind, 'alert');
  assert.equal(ecs.event?.id, 'a1');
  assert.equal(ecs.event?.start, '2026-11-30T00:00:00.000Z');
  assert.equal(ecs.event?.end, '2026-11-30T00:05:00.000Z');
  assert.equal(ecs.event?.risk_score, 97);
  assert.deepEqual(ecs.source, { ip: '10.0.0.5' });
  assert.deepEqual(ecs.host, { ip: ['10.0.0.5'] });
  assert.deepEqual(ecs.dns, { question: { name: `n2x${'q'.repeat(20)}.com` } });
  assert.deepEqual(ecs.related?.ip, ['10.0.0.5', '192.168.2.53']);
  assert.equal((ecs.related?.hosts as string[]).length, 3);
  assert.deepEqual((ecs.threat?.technique as { subtechnique: { id: string[] } }).subtechnique.id, [
    'T1568.002',
  ]);
  assert.equal(ecs.rule?.category, 'DGA');
  assert.equal(ecs.hamstring?.kind, 'hash DGA');
  assert.equal(ecs.hamstring?.kind_confidence, 0.8);
  assert.match(
    (ecs as unknown as { message: string }).message,
    /^DGA activity from 10\.0\.0\.5: 3 suspicious names, score 0\.970 \(hash DGA, confidence 0\.80\)$/,
  );
  const tunnel = alertToEcs(alert('a2'), {
    detectorClass: 'DomainatorDetector',
    observerHostname: 'o',
  }) as Record<string, Record<string, unknown>>;
  assert.deepEqual((tunnel.threat?.technique as { subtechnique: { id: string[] } }).subtechnique.id, [
    'T1071.004',
  ]);
  const trimmed = alertToEcs(alert('a3'), { observerHostname: 'o', keepWarnings: 1 }) as Record<
    string,
    Record<string, unknown>
  >;
  assert.equal(trimmed.threat, undefined);
  assert.equal(trimmed.hamstring?.warnings_omitted, 2);
  assert.equal(trimmed.hamstring?.warnings_total, 3);
});

test('config: syslog needs log_to_kafka, names facility and severity, and checks its header fields', () => {
  assert.throws(
    () =>
      validateConfig(withValue(minimalConfig(), ['pipeline', 'alerting'], { syslog: { host: 'h' } }), {
        env: {},
      }),
    /pipeline\.alerting\.log_to_kafka: expected true \(alerting\.syslog reads external_kafka_topic\)/,
  );
  const defaults = configWith({ host: 'h' }).pipeline.alerting.syslog;
  assert.deepEqual(defaults, {
    host: 'h',
    port: 514,
    transport: 'tcp',
    facility: 'local0',
    severity: 'warning',
    app_name: 'hamstring',
    sd_id: 'hamstring@32473',
    max_message_bytes: 8192,
    timeout_ms: 10_000,
    udp_error_wait_ms: 100,
  });
  assert.throws(
    () => configWith({ host: 'h', facility: 'local9' }),
    /pipeline\.alerting\.syslog\.facility: expected one of "kern"/,
  );
  assert.throws(
    () => configWith({ host: 'h', app_name: 'has space' }),
    /pipeline\.alerting\.syslog\.app_name: expected APP-NAME/,
  );
  assert.throws(
    () => configWith({ host: 'h', sd_id: 'hamstring' }),
    /pipeline\.alerting\.syslog\.sd_id: expected structured-data id/,
  );
  assert.throws(
    () => configWith({ host: 'h', transport: 'tls' }),
    /pipeline\.alerting\.syslog\.transport: expected "udp" or "tcp"/,
  );
});

/** A transport that records what it was given and fails while `down` is true. */
function fakeTransport() {
  const sent: string[][] = [];
  const state = { down: false };
  const transport: SyslogTransport = {
    send(messages) {
      if (state.down) return Promise.reject(new SyslogUnavailableError('down'));
      sent.push([...messages]);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return { transport, sent, state };
}

test('the sink: one send per partition in order; a failed send fails every record of its partition; a bad record only itself', async () => {
  const fake = fakeTransport();
  const sink = createSyslogSink({
    config: configWith({ host: 'h', hostname: 'sensor1' }),
    transport: fake.transport,
  });
  const records = [
    jsonRecord('hamstring_alerts', 0, alert('a1'), null, 0),
    jsonRecord('hamstring_alerts', 0, alert('a2'), null, 1),
    jsonRecord('hamstring_alerts', 1, alert('a3'), null, 0),
    { ...jsonRecord('hamstring_alerts', 2, {}, null, 0), value: Buffer.from('nope') },
  ];
  const result = await sink.process(records, stageContext());
  assert.equal((result.failures ?? []).length, 1);
  assert.ok((result.failures ?? [])[0]?.error instanceof DecodeError);
  assert.deepEqual(
    fake.sent.map((batch) => batch.map((m) => /alertId="([^"]+)"/.exec(m)?.[1])),
    [['a1', 'a3'], ['a2']],
  );
  assert.match(
    fake.sent[0]?.[0] ?? '',
    /^<132>1 2026-11-30T00:01:00\.123Z sensor1 hamstring \d+ dga_detector \[hamstring@32473 alertId="a1" srcIp="10\.0\.0\.5" score="0\.9700" detector="dga_detector" names="3" kind="hash DGA"\] \{"@timestamp"/,
  );

  fake.state.down = true;
  const down = await sink.process(records.slice(0, 3), stageContext());
  assert.equal((down.failures ?? []).length, 3);
  assert.ok((down.failures ?? []).every((f) => f.error instanceof SyslogUnavailableError));
});

test('the sink: an alert over max_message_bytes loses its lowest-scoring names, and says so', async () => {
  const fake = fakeTransport();
  const sink = createSyslogSink({
    config: configWith({ host: 'h', max_message_bytes: 1500 }),
    transport: fake.transport,
  });
  await sink.process([jsonRecord('t', 0, alert('big', 200), null, 0)], stageContext());
  const message = fake.sent[0]?.[0] ?? '';
  assert.ok(Buffer.byteLength(message) <= 1500, `${Buffer.byteLength(message)} bytes`);
  const body = JSON.parse(message.slice(message.indexOf('] ') + 2)) as { hamstring: Record<string, number> };
  assert.equal(body.hamstring.warnings_total, 200);
  assert.ok((body.hamstring.warnings_omitted ?? 0) > 0);
});

async function listen(port: number, onSocket: (s: Socket) => void): Promise<Server> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

test('TCP transport: octet-counted frames; a receiver gone fails the send, and the next send reconnects', async () => {
  const port = await freePort();
  let received = '';
  const sockets: Socket[] = [];
  let server = await listen(port, (s) => {
    sockets.push(s);
    s.on('data', (d: Buffer) => (received += d.toString()));
  });
  const transport = tcpTransport({ host: '127.0.0.1', port, timeoutMs: 2000 });
  const signal = new AbortController().signal;
  await transport.send(['<1>1 - - - - - - a', '<1>1 - - - - - - bb'], signal);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(received, '18 <1>1 - - - - - - a19 <1>1 - - - - - - bb');

  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise((r) => setTimeout(r, 100));
  await assert.rejects(transport.send(['<1>1 - - - - - - c'], signal), SyslogUnavailableError);

  received = '';
  server = await listen(port, (s) => s.on('data', (d: Buffer) => (received += d.toString())));
  await transport.send(['<1>1 - - - - - - d'], signal);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(received, '18 <1>1 - - - - - - d');
  await transport.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('UDP transport: a receiver that is down is noticed through its ICMP answer', async () => {
  const port = await freePort(); // nothing listens on it over UDP either
  const transport = udpTransport({ host: '127.0.0.1', port, errorWaitMs: 200 });
  await assert.rejects(
    transport.send(['<1>1 - - - - - - a'], new AbortController().signal),
    (e: unknown) => e instanceof SyslogUnavailableError && /ECONNREFUSED/.test(e.message),
  );
  await transport.close();
});
