import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { dashboardOptionsFromConfig, startDashboard } from '../../../src/app/dashboard/index.ts';
import { startMonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { runStages } from '../../../src/app/run-stages.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { clearSecrets, registerSecret } from '../../../src/errors/secrets.ts';
import { secretSafeOptions } from '../../../src/observability/logger.ts';
import { NonRetryableError, type Stage } from '../../../src/runtime/index.ts';
import type { TestClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { freePort } from '../../helpers/free-port.ts';
import { passwordUsersXml, selfSignedCertificate } from '../../helpers/tls-files.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { ownClickHousePort, startOwnClickHouse } from '../../helpers/own-clickhouse.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, readCommitted, seed } from '../../support/pipeline-harness.ts';

const OFFSET = 130;
const PASSWORD = 'Ch-secret-9b2f44d1';
const TOKEN = 'Access-token-5e8c1a7f3d';
/** Stands for the Kafka SASL password, which the Kafka client config registers as a secret. */
const SASL = 'Sasl-secret-77aa01bc';
const SECRETS = [PASSWORD, TOKEN, SASL];

let dir: string;
let ch: TestClickHouse;
let bootstrap: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hamstring-no-secrets-'));
  selfSignedCertificate(dir);
  writeFileSync(join(dir, 'users.xml'), passwordUsersXml('agent', PASSWORD));
  const https = {
    port: ownClickHousePort(OFFSET) + 2,
    certificateFile: join(dir, 'server.crt'),
    privateKeyFile: join(dir, 'server.key'),
  };
  const [c, k] = await Promise.all([
    startOwnClickHouse('no-secrets', OFFSET, { usersConfig: join(dir, 'users.xml'), https }),
    testKafka(),
  ]);
  ch = c;
  bootstrap = k.bootstrap;
});
after(async () => {
  clearSecrets();
  await ch?.server.stop();
});

test('a run with a ClickHouse password, an access token and a SASL secret: no log line, error, header, metric or page holds one', async () => {
  registerSecret(SASL);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  // The production logger's options (createLogger), at debug: the most a run ever writes.
  const log = pino({ level: 'debug', ...secretSafeOptions() }, sink);
  const saved = { ...process.env };
  Object.assign(process.env, { CLICKHOUSE_PASSWORD: PASSWORD, HAMSTRING_ACCESS_TOKEN: TOKEN });
  const input = uniqueTopic('nosecret-in');
  const output = uniqueTopic('nosecret-out');
  const name = uniqueGroup('nosecret.stage');
  await createTopics(bootstrap, [input, output], 1);
  await seed(bootstrap, input, 0, 20);
  const healthPort = await freePort();
  const dashboardPort = await freePort();
  const config = loadConfig({
    env: {},
    text: `
logging: { base: { debug: true } }
environment:
  kafka_bootstrap_servers: ${bootstrap}
  monitoring:
    clickhouse_server:
      hostname: 127.0.0.1
      port: ${ownClickHousePort(OFFSET) + 2}
      user: agent
      tls: { enabled: true, ca_file: ${join(dir, 'server.crt')} }
  record_errors: { backoff: { type: fixed, interval_ms: 100 } }
runtime: { health_port: ${healthPort}, health_host: 0.0.0.0 }
dashboard: { host: 0.0.0.0, port: ${dashboardPort} }
`,
  });
  const echo = `client config {"sasl.password":"${SASL}","password":"${PASSWORD}","token":"${TOKEN}"}`;
  let failedOnce = false;
  const stage: Stage = {
    name,
    inputTopics: [input],
    outputTopics: [output],
    process: (records, ctx) => {
      // A client's own log text forwarded as is (librdkafka's debug lines quote its configuration).
      ctx.log.debug({ clientLog: `librdkafka CONFIG: ${echo}` }, `client: ${echo}`);
      // A client that echoes its configuration in its errors: once retriable, once for good.
      if (!failedOnce) {
        failedOnce = true;
        throw new Error(`connection reset; ${echo}`);
      }
      const outputs = records
        .filter((r) => r.offset !== 7)
        .map((r) => ({ topic: output, key: r.key, value: r.value }));
      const bad = records.find((r) => r.offset === 7);
      return {
        outputs,
        failures: bad ? [{ record: bad, error: new NonRetryableError(`rejected; ${echo}`) }] : [],
      };
    },
  };
  const texts: string[] = [];
  const running = await runStages({
    config,
    stages: [stage],
    env: { ...process.env, HAMSTRING_INSTANCE_ID: 'nosecrets' },
    log,
    signals: [],
  });
  const agent = await startMonitoringAgent(config, {
    log,
    instanceId: 'nosecrets-agent',
    groupId: uniqueGroup('nosecret.agent'),
    topicPrefix: `${uniqueTopic('nosecret')}-clickhouse_`,
  });
  const dashboard = await startDashboard(dashboardOptionsFromConfig(config, { log }));
  try {
    await readCommitted(bootstrap, output, 19);
    const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1);
    assert.equal(dlt.length, 1);
    for (const [k, v] of Object.entries(dlt[0]?.headers ?? {})) texts.push(`${k}: ${v.toString()}`);
    const auth = { authorization: `Bearer ${TOKEN}` };
    await waitFor(async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`, { headers: auth })).ok, {
      timeoutMs: 30_000,
      message: '/readyz with the token answers 200',
    });
    for (const path of ['/livez', '/readyz', '/metrics', '/nothing']) {
      for (const headers of [auth, {}]) {
        const res = await fetch(`http://127.0.0.1:${healthPort}${path}`, { headers });
        texts.push(JSON.stringify([...res.headers]), await res.text());
      }
    }
    for (const path of [
      '/',
      '/alerts?host=10.0.0.1',
      '/api/pipeline',
      '/api/alerts',
      '/api/hosts',
      '/api/host?ip=1',
      '/api/config',
      '/api/instances',
    ]) {
      for (const headers of [auth, {}]) {
        const res = await fetch(`http://127.0.0.1:${dashboardPort}${path}`, { headers });
        texts.push(JSON.stringify([...res.headers]), await res.text());
      }
    }
    // The dashboard read ClickHouse over HTTPS as the password user: its queries answered.
    const pipeline = await fetch(`http://127.0.0.1:${dashboardPort}/api/pipeline`, { headers: auth });
    assert.deepEqual(((await pipeline.json()) as { errors: string[] }).errors, []);
    texts.push(await agent.metrics.registry.metrics());
  } finally {
    await dashboard.close();
    await agent.stop();
    await running.stop();
    process.env = saved;
  }
  log.flush();
  await new Promise((r) => setTimeout(r, 200));
  const all = [...lines, ...texts].join('\n');
  const messages = lines.map((l) => String((JSON.parse(l) as { msg?: unknown }).msg));
  for (const wanted of [
    'dead letter: the error',
    'clickhouse: connected to https://127.0.0.1',
    'dashboard: serving',
  ])
    assert.ok(
      messages.some((m) => m.startsWith(wanted)),
      `${wanted} in ${JSON.stringify(messages)}`,
    );
  assert.match(all, /\[REDACTED\]/, 'the echoed config was written, scrubbed');
  for (const secret of SECRETS) {
    const hits = all.split(secret).length - 1;
    assert.equal(hits, 0, `${secret}: ${hits} hits`);
  }
});
