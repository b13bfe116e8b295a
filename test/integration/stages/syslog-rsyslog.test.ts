import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildComponentStage } from '../../../src/app/builtin-stages.ts';
import { runStages, type RunningStages } from '../../../src/app/run-stages.ts';
import { StageResources } from '../../../src/app/stage-resources.ts';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import type { OutgoingAlert } from '../../../src/stages/alerter/index.ts';
import { captureLog } from '../../helpers/capture-log.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { startRsyslog, type Rsyslog } from '../../helpers/rsyslog.ts';
import { pipelineTestConfig, pollUntil, produceLines } from '../pipeline/support.ts';

const HOSTNAME = 'sensor-7';
let bootstrap: string;
let stages: RunningStages | undefined;
let rsyslog: Rsyslog | undefined;
const resources = new StageResources();
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
after(async () => {
  await stages?.stop();
  await rsyslog?.stop();
  await resources.close();
});

function alerts(prefix: string, n: number): OutgoingAlert[] {
  return Array.from({ length: n }, (_, i) => ({
    alert_id: `${prefix}-${i}`,
    overall_score: 0.9 + i / 100,
    result: [0, 1, 2].map((k) => ({
      request: {
        logline_id: `${prefix}-${i}-${k}`,
        subnet_id: '10.9.0.0_24',
        ts: `2026-11-30T10:00:0${k}.000000Z`,
        src_ip: `10.9.0.${i + 1}`,
        domain_name: `x${k}qzkvjw${i}.com`,
        status_code: 'NXDOMAIN',
        record_type: 'A',
        dns_server_ip: '192.168.2.53',
      },
      probability: 0.95 + k / 100,
    })),
    src_ip: `10.9.0.${i + 1}`,
    alert_timestamp: `2026-11-30T10:01:0${i}.25Z`,
    suspicious_batch_id: `b-${i}`,
    detector_name: 'dga_detector',
    kind: 'hash DGA',
    kind_confidence: 0.75,
  }));
}

async function runSink(
  transport: 'udp' | 'tcp',
  port: number,
  log = captureLog({ level: 'warn' }).log,
  level = 'warn',
) {
  const topic = uniqueTopic('alerts');
  const { config } = pipelineTestConfig({
    bootstrap,
    clickhousePort: Number(process.env.HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT ?? 18123),
    edit: (tree) => {
      const pipeline = tree.pipeline as Record<string, Record<string, unknown>>;
      pipeline.alerting = {
        ...pipeline.alerting,
        external_kafka_topic: topic,
        syslog: { host: '127.0.0.1', port, transport, hostname: HOSTNAME, udp_error_wait_ms: 200 },
      };
      const environment = tree.environment as Record<string, Record<string, unknown>>;
      environment.record_errors = {
        ...environment.record_errors,
        backoff: { type: 'fixed', interval_ms: 500, max_attempts: 100 },
      };
    },
  });
  const stage = await buildComponentStage(config, 'syslog', { resources });
  await createStageTopics(config, [stage], { partitions: 1 });
  stages = await runStages({
    config,
    stages: [stage],
    atLeastOnce: new Set([stage.name]),
    signals: [],
    log,
    env: { ...process.env, HAMSTRING_LOG_LEVEL: level },
  });
  return { config, topic };
}

const RFC5424 =
  /^<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (\[hamstring@32473(?: [A-Za-z]+="(?:[^"\\\]]|\\.)*")*\]) (\{.*\})$/;

/** Every received message parses as RFC 5424 with the right header, structured data and ECS body. */
function checkMessages(server: Rsyslog, sent: readonly OutgoingAlert[]): void {
  const raw = server.raw();
  const byId = new Map<string, string>();
  for (const message of raw) {
    const m = RFC5424.exec(message);
    assert.ok(m, `not RFC 5424: ${message.slice(0, 200)}`);
    const [, pri, timestamp, host, app, procId, msgId, sd = '', body = ''] = m;
    const id = /alertId="([^"]+)"/.exec(sd)?.[1] ?? '';
    const alert = sent.find((a) => a.alert_id === id);
    assert.ok(alert, `unknown alert id ${id}`);
    byId.set(id, message);
    assert.equal(pri, '132', 'local0 (16) x 8 + warning (4)');
    assert.equal(timestamp, alert.alert_timestamp);
    assert.equal(host, HOSTNAME);
    assert.equal(app, 'hamstring');
    assert.equal(procId, String(process.pid));
    assert.equal(msgId, 'dga_detector');
    assert.equal(
      sd,
      `[hamstring@32473 alertId="${id}" srcIp="${alert.src_ip}" score="${alert.overall_score.toFixed(4)}" detector="dga_detector" names="3" kind="hash DGA"]`,
    );
    const ecs = JSON.parse(body) as Record<string, Record<string, unknown>>;
    assert.equal(ecs['@timestamp'], alert.alert_timestamp);
    assert.equal(ecs.event?.kind, 'alert');
    assert.equal(ecs.event?.id, id);
    assert.deepEqual(ecs.source, { ip: alert.src_ip });
    assert.equal(
      ecs.dns?.question && (ecs.dns.question as { name: string }).name,
      `x2qzkvjw${id.split('-').pop() ?? ''}.com`,
    );
    assert.equal(ecs.hamstring?.kind, 'hash DGA');
    assert.equal((ecs.related?.hosts as string[]).length, 3);
    assert.deepEqual((ecs.threat?.technique as { subtechnique: { id: string[] } }).subtechnique.id, [
      'T1568.002',
    ]);
  }
  assert.deepEqual([...byId.keys()].sort(), sent.map((a) => a.alert_id).sort(), 'every alert arrived');
  // rsyslog's own RFC 5424 parser read the same header and structured data.
  for (const line of server.parsed()) {
    const [pri, time, host, app, procId, msgId, sd, version] = line.split('|');
    const alert = sent.find((a) => (sd ?? '').includes(`alertId="${a.alert_id}"`));
    assert.equal(Date.parse(time ?? ''), Date.parse(alert?.alert_timestamp ?? ''), `rsyslog's time ${time}`);
    assert.deepEqual(
      [pri, host, app, procId, msgId, version],
      ['132', HOSTNAME, 'hamstring', String(process.pid), 'dga_detector', '1'],
    );
    assert.match(sd ?? '', /^\[hamstring@32473 alertId="/);
    assert.ok(line.endsWith('}'), 'the ECS body is the message');
  }
  assert.equal(server.parsed().length, raw.length);
}

async function stopAll(): Promise<void> {
  await stages?.stop();
  stages = undefined;
  await rsyslog?.stop();
  rsyslog = undefined;
}

for (const transport of ['tcp', 'udp'] as const)
  test(`alerts reach a real rsyslog over ${transport.toUpperCase()} as RFC 5424 messages with ECS JSON`, async () => {
    const [udpPort, tcpPort] = [await freePort(), await freePort()];
    rsyslog = await startRsyslog({ udpPort, tcpPort });
    const { topic } = await runSink(transport, transport === 'udp' ? udpPort : tcpPort);
    const sent = alerts(transport, 6);
    await produceLines(
      bootstrap,
      topic,
      sent.map((a) => JSON.stringify(a)),
      (_, i) => sent[i]?.src_ip ?? null,
    );
    const server = rsyslog;
    await pollUntil(
      () => Promise.resolve(server.raw().length),
      (n) => n >= sent.length,
      60_000,
    );
    checkMessages(server, sent);
    await stopAll();
  });

test('a syslog receiver that is down loses no alert: the sends are retried with back-off until it is up', async () => {
  const [udpPort, tcpPort] = [await freePort(), await freePort()];
  // The retry's error text (which a stage may build from the record) is logged at debug only.
  const captured = captureLog({ level: 'debug' });
  const { topic } = await runSink('tcp', tcpPort, captured.log, 'debug');
  const sent = alerts('down', 4);
  await produceLines(
    bootstrap,
    topic,
    sent.map((a) => JSON.stringify(a)),
    (_, i) => sent[i]?.src_ip ?? null,
  );
  const retries = () =>
    captured.lines.filter((l) => l.event === 'retry' && /ECONNREFUSED/.test(JSON.stringify(l.err)));
  await pollUntil(
    () => Promise.resolve(retries().length),
    (n) => n >= 2,
    60_000,
  );
  assert.ok(retries().length >= 2, 'sends to the closed port were retried');

  rsyslog = await startRsyslog({ udpPort, tcpPort });
  const server = rsyslog;
  await pollUntil(
    () => Promise.resolve(new Set(server.raw().map((m) => /alertId="([^"]+)"/.exec(m)?.[1])).size),
    (n) => n >= sent.length,
    60_000,
  );
  checkMessages(server, sent);
  assert.equal(captured.lines.filter((l) => l.event === 'dead-letter').length, 0, 'nothing dead-lettered');
  await stopAll();
});
