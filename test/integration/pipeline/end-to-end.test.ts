import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPipeline, type RunningPipeline } from '../../../src/app/pipeline.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { decodeOutgoingAlert } from '../../../src/stages/alerter/index.ts';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import {
  clickhouseNumber,
  pipelineTestConfig,
  pollUntil,
  produceLines,
  readUntil,
  resetBroker,
} from './support.ts';

let bootstrap: string;
let clickhouseUrl: string;
let clickhousePort: number;
let pipeline: RunningPipeline | undefined;
/** Stage logs at warn: the test's output stays readable. */
const QUIET = { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' };

before(async () => {
  const [kafka, clickhouse] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = kafka.bootstrap;
  clickhouseUrl = clickhouse.url;
  clickhousePort = Number(new URL(clickhouse.url).port);
  await resetBroker(bootstrap);
});
after(async () => {
  await pipeline?.stop();
});

/** Lines no collector accepts: not JSON, a bad address, a bad timestamp, a field outside its list. */
const BAD_LINES = [
  'not json at all',
  '{"ts":"2026-11-30T10:00:00.000000Z","src_ip":"999.1.1.1","status_code":"NOERROR"}',
  '{"ts":"yesterday","src_ip":"10.0.0.10","status_code":"NOERROR"}',
  '{"ts":"2026-11-30T10:00:00.000000Z","src_ip":"10.0.0.10","status_code":"SERVFAIL","dns_server_ip":"192.168.2.53","domain_name":"a.com","record_type":"A","response_ip":"1.2.3.4","size":"10b"}',
];

test('generated traffic through all six stages on real Kafka and ClickHouse: every DGA-infected host alerted, no benign host; valid + failed lines = lines in, each line recorded once', async () => {
  // The shipped StreamAD inspector: its verdict depends on the lines alone, not on how they fell
  // into batches (bin-stream.ts), so all lines produced at once are judged as if they trickled in.
  const { config } = pipelineTestConfig({ bootstrap, clickhousePort });
  const database = `e2e_${Date.now()}`;
  const traffic = generateTraffic({
    seed: 11,
    rate: 250,
    // 5,000 lines: every DGA host is alerted within them; twice as many added no proof, only rows
    // (about ten a line) for the monitoring agent to insert.
    durationSeconds: 20,
    hosts: 64,
    // Half a second off the epoch's seconds: the generator fits each DGA burst into one second of
    // its own, so every burst straddles two of the inspector's one-second suspicion spans, and each
    // infected host is found only if a span with an anomalous bin also sends on the lines of the
    // spans beside it (a split burst once cost a suppobox host its alert).
    startMs: Math.floor(Date.now() / 1000) * 1000 - 60_000 + 500,
  });
  const good = [...traffic.lines()];
  const bad = Array.from({ length: 25 }, (_, i) => BAD_LINES[i % BAD_LINES.length]!);
  const infected = traffic.truth.filter((h) => h.role === 'dga').map((h) => h.ip);
  const benign = new Set(traffic.truth.filter((h) => h.role === 'benign').map((h) => h.ip));

  pipeline = await startPipeline({
    config,
    partitions: 3,
    log: silentLogger(),
    agent: { database },
    env: QUIET,
  });
  const lines = [...good.map((l) => l.line), ...bad];
  await produceLines(bootstrap, 'hamstring_input-dns', lines, (_, i) => good[i]?.srcIp ?? null);

  const alerts = await readUntil(
    bootstrap,
    config.pipeline.alerting.external_kafka_topic,
    (records) => {
      const hosts = new Set(records.map((r) => decodeOutgoingAlert(r.value).src_ip));
      return infected.every((ip) => hosts.has(ip));
    },
    180_000,
  );
  const alerted = new Set(alerts.map((r) => decodeOutgoingAlert(r.value).src_ip));
  assert.deepEqual(
    infected.filter((ip) => !alerted.has(ip)),
    [],
    'infected hosts without an alert',
  );
  assert.deepEqual(
    [...alerted].filter((ip) => benign.has(ip)),
    [],
    'benign hosts alerted',
  );

  const count = (sql: string) => clickhouseNumber(clickhouseUrl, sql);
  const q = (table: string) => `${database}.${table}_dedup`;
  const accounted = await pollUntil(
    async () =>
      (await count(`SELECT count() FROM ${q('loglines')}`)) +
      (await count(`SELECT count() FROM ${q('failed_loglines')}`)),
    (n) => n >= lines.length,
    // About ten rows per line reach the agent, which inserts 50 rows at a time (clickhouse_connector.batch_size).
    300_000,
  );
  assert.equal(accounted, lines.length, 'valid + failed lines in ClickHouse');
  assert.equal(await count(`SELECT count() FROM ${q('failed_loglines')}`), bad.length, 'failed lines');
  // The agent inserts table by table: server_logs may still be on its way when loglines is complete.
  const serverLogs = await pollUntil(
    () => count(`SELECT count() FROM ${q('server_logs')}`),
    (n) => n >= lines.length,
    300_000,
  );
  assert.equal(serverLogs, lines.length, 'server_logs rows');
  assert.equal(
    await count(`SELECT uniqExact(message_id) FROM ${q('server_logs')}`),
    lines.length,
    'lines in, once each',
  );
  assert.equal(
    await count(`SELECT count() - uniqExact(logline_id) FROM ${q('loglines')}`),
    0,
    'a valid line with two loglines rows',
  );
  await pipeline.stop();
  pipeline = undefined;
});
