import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { loopbackOf } from '../../../src/app/resolver-feed.ts';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { dropDatabase } from '../monitoring/support.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { demoTestEdit, pipelineTestConfig } from '../pipeline/support.ts';

/**
 * `hamstring up --demo --source unbound` end to end: the generator's hosts ask a private Unbound
 * from their own loopback addresses, Unbound's dnstap stream reaches the sensor, and the pipeline
 * finds the infected hosts from what the resolver saw, accusing no benign one. The demo ends by
 * itself (traffic done, stages drained) and prints its alerts and summary.
 */
// 25 s of traffic: every infected host is alerted within it (the pipeline's time beyond the traffic,
// starting and draining, does not shrink with it); the 180 s demo is dashboard/live-demo's.
const DEMO = { seed: 3, hosts: 24, rate: 60, duration: 25 };
const ALERT_LINE = /^\[hamstring\] ALERT host=(\S+) score=(\S+) (?:family=(?:"[^"]*"|\S+) )?detector=(\S+)/gm;
const database = `resolver_demo_${Date.now()}`;
let clickhouseUrl: string | undefined;
let configPath: string;

let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: the shipped config's fixed group and changelog names then meet no other
// file's, so this file runs beside others instead of in the serial pipeline lane.
before(async () => {
  const clickhouse = await testClickHouse();
  kafka = await startPrivateKafka('resolver-demo');
  clickhouseUrl = clickhouse.url;
  ({ path: configPath } = pipelineTestConfig({
    bootstrap: kafka.bootstrap,
    clickhousePort: Number(new URL(clickhouse.url).port),
    edit: demoTestEdit(database),
  }));
});
after(async () => {
  if (clickhouseUrl) await dropDatabase(clickhouseUrl, database);
  await kafka?.stop();
});

test('up --demo --source unbound: the infected hosts are found from what Unbound saw, no benign host accused', async (t) => {
  const truth = generateTraffic({ ...DEMO, durationSeconds: DEMO.duration, startMs: 0 }).truth;
  const infected = truth.filter((h) => h.role === 'dga' || h.role === 'tunnel').map((h) => loopbackOf(h.ip));
  const benign = new Set(truth.filter((h) => h.role === 'benign').map((h) => loopbackOf(h.ip)));
  const demo = spawn(
    process.execPath,
    [
      'bin/hamstring.js',
      'up',
      '--demo',
      '--source',
      'unbound',
      '--config',
      configPath,
      ...Object.entries(DEMO).flatMap(([k, v]) => [`--${k}`, String(v)]),
    ],
    { env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Apart: a stderr chunk landing inside a stdout line would corrupt the alert lines parsed below.
  let out = '';
  let err = '';
  demo.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  demo.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => demo.once('exit', resolve));
  // While it runs, the dashboard shows the sensor and what it forwarded.
  let sensorRow: { sensor: string; kind: string; received: number; forwarded: number } | undefined;
  try {
    await waitFor(
      async () => {
        const url = /up: dashboard at (\S+)/.exec(out)?.[1];
        if (url === undefined) return false;
        const data = (await (await fetch(new URL('/api/pipeline', url))).json()) as {
          metrics: { sensors: NonNullable<typeof sensorRow>[] } | null;
        };
        sensorRow = data.metrics?.sensors.find((row) => row.sensor === 'demo-unbound');
        return (sensorRow?.forwarded ?? 0) > 0;
      },
      {
        timeoutMs: 60_000,
        message: "the dashboard's sensor row forwarding lines",
        observe: () => sensorRow ?? `${out}\n${err}`,
      },
    );
  } catch (e) {
    demo.kill('SIGKILL');
    throw e;
  }
  assert.equal(sensorRow?.kind, 'dnstap');
  assert.ok((sensorRow?.received ?? 0) >= (sensorRow?.forwarded ?? 0));
  const code = await exited;
  assert.equal(code, 0, `${out}\n${err}`);
  assert.match(out, /asking a private Unbound from 127\.x addresses; dnstap sensor/);
  const alerted = new Set([...out.matchAll(ALERT_LINE)].map((m) => m[1]!));
  for (const host of infected) assert.ok(alerted.has(host), `${host} (infected) alerted:\n${out}`);
  const accused = [...alerted].filter((h) => benign.has(h));
  assert.deepEqual(accused, [], `benign hosts accused:\n${out}`);
  assert.ok(
    [...alerted].every((h) => h.startsWith('127.')),
    'alerts name the addresses the resolver saw',
  );
  // The demo's own summary holds the run against the truth (with the loopback addresses) too.
  const summary = out.slice(out.indexOf('HAMSTRING run summary'));
  t.diagnostic(summary.replace(/\n\s*/g, ' | '));
  assert.match(
    summary,
    new RegExp(`infected hosts found +${infected.length} of ${infected.length}`),
    summary,
  );
  assert.match(summary, /hosts falsely accused +0/, summary);
});
