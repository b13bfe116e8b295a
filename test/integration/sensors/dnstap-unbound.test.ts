import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DnstapSource } from '../../../src/app/sensors/dnstap-source.ts';
import { startSensor, type RunningSensor } from '../../../src/app/sensors/start-sensor.ts';
import { sensorSchema, validateConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { digBatch, runDnsperf, type DigQuery } from '../../../src/dev/dns-load.ts';
import { READINESS_PROBE_NAME, startUnbound, type RunningUnbound } from '../../../src/dev/unbound.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { readTopicLines } from '../../helpers/topic-lines.ts';
import { uniqueTopic } from '../../helpers/names.ts';

/**
 * A real resolver end to end: Debian's Unbound streams dnstap (CLIENT_QUERY and CLIENT_RESPONSE) to
 * the sensor's Unix socket; `dig` asks from 40 loopback addresses (one per simulated host) and
 * `dnsperf` sustains a rate; the log lines are read back read_committed from the input topic and
 * checked field by field, and counted against what dnsperf says was answered.
 */

const ZONE = 'hamstring.test';
const LOCAL_DATA = [
  `www.${ZONE}. 300 IN A 192.0.2.10`,
  `www.${ZONE}. 300 IN A 192.0.2.11`,
  `alias.${ZONE}. 300 IN CNAME www.${ZONE}.`,
  `v6.${ZONE}. 300 IN AAAA 2001:db8::10`,
  `txt.${ZONE}. 300 IN TXT "hello world"`,
];

interface Expected {
  readonly name: string;
  readonly type: string;
  readonly status: string;
  /** The first answer address: Unbound rotates an RRset's order between answers (rrset-roundrobin). */
  readonly responseIps: readonly string[];
}
const ASKED: readonly Expected[] = [
  { name: `www.${ZONE}`, type: 'A', status: 'NOERROR', responseIps: ['192.0.2.10', '192.0.2.11'] },
  { name: `alias.${ZONE}`, type: 'A', status: 'NOERROR', responseIps: ['0.0.0.0'] },
  { name: `v6.${ZONE}`, type: 'AAAA', status: 'NOERROR', responseIps: ['2001:db8::10'] },
  { name: `txt.${ZONE}`, type: 'TXT', status: 'NOERROR', responseIps: ['0.0.0.0'] },
  { name: `missing.${ZONE}`, type: 'A', status: 'NXDOMAIN', responseIps: ['0.0.0.0'] },
  { name: `kq3v9x7d2m.${ZONE}`, type: 'AAAA', status: 'NXDOMAIN', responseIps: ['::'] },
];
const HOSTS = Array.from({ length: 40 }, (_, i) => `127.0.0.${10 + i}`);
const DNSPERF_FROM = '127.0.0.250';

let dir: string;
let config: HamstringConfig;
let topic: string;
let bootstrap: string;
let sensor: RunningSensor | undefined;
let unbound: RunningUnbound | undefined;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dnstap-unbound-'));
  bootstrap = (await testKafka()).bootstrap;
  const prefix = uniqueTopic('sensor-in');
  topic = `${prefix}-dns`;
  const admin = createAdmin(bootstrap);
  try {
    await admin.createTopics([{ topic, partitions: 3, replicationFactor: 1 }]);
  } finally {
    admin.close();
  }
  config = validateConfig(
    {
      environment: {
        kafka_bootstrap_servers: bootstrap,
        kafka_topics_prefix: { pipeline: { logserver_in: prefix } },
        monitoring: { clickhouse_server: { hostname: '127.0.0.1' } },
      },
    },
    { env: {} },
  );
});

after(async () => {
  await unbound?.stop();
  await sensor?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('Unbound -> dnstap -> sensor -> input topic: every answer, field by field, none lost', async () => {
  const socket = join(dir, 'dnstap.sock');
  const metricsPort = await freePort();
  sensor = await startSensor(
    config,
    sensorSchema.parse({
      name: 'unbound-test',
      kind: 'dnstap',
      protocol: 'dns',
      dnstap: { unix: socket },
      metrics_port: metricsPort,
      log_interval_seconds: 3600,
    }),
    silentLogger(),
  );
  assert.equal(sensor.topic, topic);
  const dnsPort = await freePort();
  unbound = await startUnbound({
    dir,
    port: dnsPort,
    dnstap: { unix: socket },
    localZones: [`"${ZONE}." static`],
    localData: LOCAL_DATA,
  });

  const queries: DigQuery[] = HOSTS.flatMap((from) =>
    ASKED.map((q) => ({ from, name: q.name, type: q.type })),
  );
  const digOut = await digBatch({ dir, server: '127.0.0.1', port: dnsPort, queries });
  assert.equal(
    (digOut.match(/status: (NOERROR|NXDOMAIN)/g) ?? []).length,
    queries.length,
    'dig got every answer',
  );

  const perf = await runDnsperf({
    dir,
    port: dnsPort,
    queries: ASKED.map((q) => ({ name: q.name, type: q.type })),
    seconds: 5,
    maxQps: 2000,
    clients: 4,
    localAddress: DNSPERF_FROM,
  });
  assert.ok(perf.completed > 5000, `dnsperf answered ${perf.completed}`);
  // Unbound does not flush its dnstap queue when it stops (messages still queued are lost: 9 of
  // 10,000 once): wait until every answered query's two frames are in and the stream is quiet.
  const answered = queries.length + perf.completed;
  let last = -1;
  const quietBy = Date.now() + 30_000;
  while (Date.now() < quietBy) {
    const now = sensor.runner.counters().received;
    if (now === last && now >= 2 * answered) break;
    last = now;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await unbound.stop();
  // Once Unbound's connection is closed (it sends STOP) and the sensor holds nothing, every line
  // is forwarded.
  const source = sensor.runner.source;
  assert.ok(source instanceof DnstapSource);
  const running = sensor;
  const settled = () => source.connections === 0 && running.runner.counters().pending === 0;
  const deadline = Date.now() + 30_000;
  while (!settled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  assert.ok(settled(), 'the resolver closed its dnstap connection and the sensor delivered everything');
  const counters = sensor.runner.counters();
  console.log(
    `dig ${queries.length} queries; dnsperf ${perf.completed} completed at ${perf.qps} qps; sensor ${JSON.stringify(counters)}`,
  );
  assert.equal(counters.malformed, 0);
  assert.equal(counters.dropped + counters.failed, 0);
  const lines = await readTopicLines({
    bootstrap,
    topic,
    clientId: 'dnstap-unbound-check',
    done: (l) => l.length >= counters.forwarded,
  });
  assert.equal(lines.length, counters.forwarded, 'every forwarded line is in the topic, once');

  // dig's lines, field by field.
  const byHost = new Map<string, Record<string, string>[]>();
  for (const l of lines) byHost.set(l.src_ip ?? '', [...(byHost.get(l.src_ip ?? '') ?? []), l]);
  for (const host of HOSTS) {
    const got = byHost.get(host) ?? [];
    assert.equal(got.length, ASKED.length, `${host}: one line per query`);
    for (const q of ASKED) {
      const line = got.find((l) => l.domain_name === q.name && l.record_type === q.type);
      assert.ok(line, `${host} ${q.name} ${q.type}`);
      assert.deepEqual(Object.keys(line).sort(), [
        'dns_server_ip',
        'domain_name',
        'record_type',
        'response_ip',
        'size',
        'src_ip',
        'status_code',
        'ts',
      ]);
      assert.equal(line.status_code, q.status);
      assert.equal(line.dns_server_ip, '127.0.0.1');
      assert.ok(q.responseIps.includes(line.response_ip ?? ''), `${q.name}: response_ip ${line.response_ip}`);
      assert.match(line.size ?? '', /^\d+b$/);
      assert.match(line.ts ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      assert.ok(Math.abs(Date.parse(line.ts ?? '') - Date.now()) < 120_000, 'a live timestamp');
    }
  }
  // dnsperf's lines: one per answered query while Kafka is up.
  const perfLines = lines.filter((l) => l.src_ip === DNSPERF_FROM);
  const probeLines = lines.filter((l) => l.domain_name === READINESS_PROBE_NAME);
  assert.equal(perf.lost, 0, 'dnsperf lost no query on loopback');
  assert.equal(
    perfLines.length,
    perf.completed,
    `dnsperf completed ${perf.completed}, lines ${perfLines.length}`,
  );
  assert.equal(lines.length, queries.length + perf.completed + probeLines.length, 'no other lines');
  const paired = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  assert.match(
    paired,
    new RegExp(`hamstring_sensor_forwarded_total\\{sensor="unbound-test",kind="dnstap"\\} ${lines.length}`),
  );
  assert.match(paired, /counter="paired"\} [1-9]/);
  const final = await sensor.stop();
  sensor = undefined;
  assert.equal(final.forwarded, lines.length);
  assert.equal(final.received, 2 * lines.length, 'one query and one response frame per line');
});

test('Unbound over TCP (dnstap-ip, no TLS) to the sensor bound on 127.0.0.1', async () => {
  const tcpPort = await freePort();
  const tcpDir = mkdtempSync(join(dir, 'tcp-'));
  const tcpTopicPrefix = uniqueTopic('sensor-tcp');
  const admin = createAdmin(bootstrap);
  try {
    await admin.createTopics([{ topic: `${tcpTopicPrefix}-dns`, partitions: 1, replicationFactor: 1 }]);
  } finally {
    admin.close();
  }
  const tcpConfig = validateConfig(
    {
      environment: {
        kafka_bootstrap_servers: bootstrap,
        kafka_topics_prefix: { pipeline: { logserver_in: tcpTopicPrefix } },
        monitoring: { clickhouse_server: { hostname: '127.0.0.1' } },
      },
    },
    { env: {} },
  );
  const tcpSensor = await startSensor(
    tcpConfig,
    sensorSchema.parse({
      name: 'unbound-tcp',
      kind: 'dnstap',
      protocol: 'dns',
      dnstap: { tcp: `127.0.0.1:${tcpPort}` },
      log_interval_seconds: 3600,
    }),
    silentLogger(),
  );
  const dnsPort = await freePort();
  const server = await startUnbound({
    dir: tcpDir,
    port: dnsPort,
    dnstap: { tcp: { host: '127.0.0.1', port: tcpPort } },
    localZones: [`"${ZONE}." static`],
    localData: LOCAL_DATA,
  });
  try {
    const hosts = HOSTS.slice(0, 10);
    const queries = hosts.map((from) => ({ from, name: `v6.${ZONE}`, type: 'AAAA' }));
    await digBatch({ dir: tcpDir, server: '127.0.0.1', port: dnsPort, queries });
    const deadline = Date.now() + 30_000;
    const fromHosts = () => tcpSensor.runner.counters().forwarded;
    while (fromHosts() < queries.length + 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
  } finally {
    await server.stop();
  }
  const c = await tcpSensor.stop();
  assert.equal(c.malformed, 0);
  const lines = await readTopicLines({
    bootstrap,
    topic: `${tcpTopicPrefix}-dns`,
    clientId: 'dnstap-unbound-tcp-check',
    done: (l) => l.length >= c.forwarded,
    timeoutMs: 30_000,
  });
  const v6 = lines.filter((l) => l.domain_name === `v6.${ZONE}`);
  assert.deepEqual(v6.map((l) => l.src_ip).sort(), HOSTS.slice(0, 10).sort());
  assert.ok(
    v6.every(
      (l) => l.response_ip === '2001:db8::10' && l.record_type === 'AAAA' && l.status_code === 'NOERROR',
    ),
  );
});
