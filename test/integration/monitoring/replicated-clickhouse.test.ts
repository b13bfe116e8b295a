import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  dashboardOptionsFromConfig,
  startDashboard,
  type Dashboard,
} from '../../../src/app/dashboard/index.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { LocalClickHouse } from '../../../src/dev/clickhouse-server.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { LocalZooKeeper } from '../../../src/dev/zookeeper.ts';
import { TABLE_NAMES } from '../../../src/monitoring/tables.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  CapturedLog,
  command,
  counts,
  monitoringWorld,
  produce,
  query,
  rows,
  startAgent,
  testConfig,
  type MonitoringWorld,
} from './support.ts';

/*
 * A replicated monitoring store on servers of its own (ports 27400-27499): ZooKeeper from Debian's
 * jar, two ClickHouse 18.16 replicas of one shard, a Kafka broker of its own and the real agent. One
 * replica is killed (-9) while rows flow: the agent moves to the other, the dashboard reads from
 * the other, and the killed one catches up by replication once it is back.
 */
const ZK_PORT = 27401;
const REPLICAS = [
  { name: 'r1', httpPort: 27430, tcpPort: 27440 },
  { name: 'r2', httpPort: 27431, tcpPort: 27441 },
];
const base = join(projectRoot, 'var', 'test', 'replicated-clickhouse');

let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
let zk: LocalZooKeeper | undefined;
const servers: LocalClickHouse[] = [];
const agents: MonitoringAgent[] = [];
let dashboard: Dashboard | undefined;

before(async () => {
  for (const r of REPLICAS) await LocalClickHouse.attach(join(base, r.name))?.stop();
  await LocalZooKeeper.attach(join(base, 'zookeeper'))?.stop();
  rmSync(base, { recursive: true, force: true });
  const replicas = REPLICAS.map((r) => ({ host: '127.0.0.1', tcpPort: r.tcpPort }));
  [kafka, zk] = await Promise.all([
    startPrivateKafka('replicated-clickhouse'),
    LocalZooKeeper.start({ dataDir: join(base, 'zookeeper'), port: ZK_PORT }),
  ]);
  const zookeeper = [zk.address];
  servers.push(
    ...(await Promise.all(
      REPLICAS.map((r) =>
        LocalClickHouse.start({
          dataDir: join(base, r.name),
          httpPort: r.httpPort,
          tcpPort: r.tcpPort,
          replication: { zookeeper, shard: '01', replica: r.name, cluster: 'hamstring', replicas },
        }),
      ),
    )),
  );
});

after(async () => {
  await dashboard?.close();
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await zk?.stop();
  await kafka?.stop();
  rmSync(base, { recursive: true, force: true });
});

async function identities(url: string, world: MonitoringWorld, table: string) {
  const [row] = await query<{ n: string; ids: string; lo: string; hi: string }>(
    url,
    `SELECT count() AS n, uniqExact(src_partition, src_offset, row_index) AS ids, min(src_offset) AS lo, max(src_offset) AS hi FROM ${world.database}.${table}_dedup`,
  );
  return { n: Number(row?.n), ids: Number(row?.ids), lo: Number(row?.lo), hi: Number(row?.hi) };
}

test('one replica killed mid-run: the other keeps taking rows and serving the dashboard; the killed one catches up; every row once on both', async () => {
  const t0 = Date.now();
  const [r1, r2] = servers;
  assert.ok(kafka && r1 && r2);
  const bootstrap = kafka.bootstrap;
  const world = await monitoringWorld(bootstrap, TABLE_NAMES, 1);
  const config = testConfig(bootstrap, r1.url, {
    replication: { replicas: [{ hostname: '127.0.0.1', port: r2.httpPort }] },
  });
  const log = new CapturedLog();
  const table = `${world.database}.logline_to_batches`;
  // The kill, placed by the agent's own inserts rather than by a timer: right after a chunk that
  // reached only r1 (r2's fetches are stopped while the kill is armed) and before the rest of its
  // batch, so the batch fails and is replayed on r2. Chunks that end a batch before that are made
  // to reach r2 first: a committed batch's rows that r2 had not fetched when r1 died would be
  // missing there until r1 returns (asynchronous replication, not what this test is about).
  let kill: 'off' | 'armed' | 'done' = 'off';
  let killedAfter = 0;
  const afterInsert = async (info: { table: string; rows: number; pending: number }) => {
    if (kill !== 'armed' || info.table !== 'logline_to_batches') return;
    if (info.pending === 0) {
      await command(r2.url, `SYSTEM START FETCHES ${table}`);
      await command(r2.url, `SYSTEM SYNC REPLICA ${table}`);
      await command(r2.url, `SYSTEM STOP FETCHES ${table}`);
      return;
    }
    kill = 'done';
    killedAfter = info.rows;
    await r1.kill();
    await command(r2.url, `SYSTEM START FETCHES ${table}`);
  };
  const agent = await startAgent(config, bootstrap, world, { log: log.logger, hooks: { afterInsert } });
  agents.push(agent);

  // The agent made the tables on both replicas, replicated ones.
  await waitFor(
    async () =>
      (
        await query<{ n: string }>(
          r2.url,
          `SELECT count() AS n FROM system.tables WHERE database = '${world.database}' AND engine = 'ReplicatedReplacingMergeTree'`,
        ).catch(() => [])
      )[0]?.n === String(TABLE_NAMES.length),
    { timeoutMs: 30_000, message: 'replicated tables on the second replica' },
  );

  await produce(bootstrap, [...rows(world, 'logline_to_batches', 0, 600), ...rows(world, 'alerts', 0, 40)]);
  await waitFor(
    async () =>
      (await counts(r1.url, world.database, 'logline_to_batches')).dedup === 600 &&
      (await counts(r2.url, world.database, 'logline_to_batches')).dedup === 600,
    { timeoutMs: 60_000, message: 'the first 600 rows on both replicas' },
  );

  // Rows keep flowing while the replica in use is killed.
  await command(r2.url, `SYSTEM STOP FETCHES ${table}`);
  kill = 'armed';
  for (let i = 0; i < 6; i += 1) {
    await produce(bootstrap, rows(world, 'logline_to_batches', 600 + i * 100, 100));
    await new Promise((r) => setTimeout(r, 300));
  }
  await produce(bootstrap, rows(world, 'alerts', 40, 40));
  await waitFor(() => kill === 'done', { timeoutMs: 30_000, message: 'r1 killed in the middle of a batch' });
  await waitFor(async () => (await counts(r2.url, world.database, 'logline_to_batches')).dedup === 1_200, {
    timeoutMs: 60_000,
    message: 'the surviving replica takes every row',
    observe: () => log.messages().slice(-5),
  });
  assert.ok(killedAfter > 0, 'a chunk of the batch reached only r1 before it died');
  assert.ok(
    log
      .messages()
      .includes('clickhouse: insert failed; the batch is discarded and replayed after reconnecting'),
    'the batch r1 died under was replayed',
  );
  assert.equal(r1.isRunning(), false);
  assert.ok(agent.outages >= 1, 'the failed insert was seen');
  assert.ok(
    log.lines.some(
      (l) =>
        l.event === 'clickhouse-connected' &&
        l.msg === `clickhouse: connected to ${r2.url} (${agent.clickhouseVersion})`,
    ),
    'the agent moved to the second replica',
  );
  assert.equal(
    log.messages().filter((m) => m === 'clickhouse: unreachable, retrying').length,
    0,
    'a down replica is passed over, not waited for',
  );

  // The dashboard's reading side answers from the surviving replica.
  dashboard = await startDashboard({
    ...dashboardOptionsFromConfig(config, { log: silentLogger(), database: world.database }),
    port: 0,
  });
  await waitFor(
    async () => (await fetchJson<unknown[]>(`${dashboard?.url}api/alerts?limit=1000`)).length === 80,
    {
      timeoutMs: 30_000,
      message: 'the dashboard lists every alert with the first replica down',
    },
  );
  const pipeline = await fetch(`${dashboard.url}api/pipeline`);
  assert.equal(pipeline.status, 200, await pipeline.text());

  // Back: it catches up by replication (the agent keeps inserting into the second replica).
  await r1.restart();
  await produce(bootstrap, rows(world, 'logline_to_batches', 1_200, 300));
  await waitFor(
    async () =>
      (await counts(r1.url, world.database, 'logline_to_batches')).dedup === 1_500 &&
      (await counts(r2.url, world.database, 'logline_to_batches')).dedup === 1_500 &&
      (await counts(r1.url, world.database, 'alerts')).dedup === 80,
    { timeoutMs: 60_000, message: 'the killed replica caught up', observe: () => log.messages().slice(-3) },
  );
  const connected = log.lines.filter((l) => l.event === 'clickhouse-connected').map((l) => l.msg);
  assert.equal(
    connected.filter((m) => String(m).includes(r1.url)).length,
    1,
    'the returning replica got its rows by replication: the agent stayed on the second one',
  );
  for (const server of [r1, r2]) {
    const lines = await identities(server.url, world, 'logline_to_batches');
    assert.deepEqual(
      lines,
      { n: 1_500, ids: 1_500, lo: 0, hi: 1_499 },
      `${server.url}: every row exactly once`,
    );
    const alerts = await identities(server.url, world, 'alerts');
    assert.deepEqual(alerts, { n: 80, ids: 80, lo: 0, hi: 79 }, `${server.url}: every alert exactly once`);
  }
  console.log(
    `replicated ClickHouse: killed after a ${killedAfter}-row chunk, ${agent.outages} outage(s), ${Date.now() - t0} ms`,
  );
  await dashboard.close();
  dashboard = undefined;
  await agent.stop();
});

test('a replica down when the agent starts gets the tables once it is back, and every row by replication', async () => {
  const t0 = Date.now();
  const [r1, r2] = servers;
  assert.ok(kafka && r1 && r2);
  const bootstrap = kafka.bootstrap;
  // After a failure of the test before, r1 may still be down: with no replica up the agent would
  // wait for one until the file's timeout.
  if (!r1.isRunning()) await r1.restart();
  await r2.kill();
  const world = await monitoringWorld(bootstrap, ['logline_to_batches'], 1);
  const config = testConfig(bootstrap, r1.url, {
    replication: { replicas: [{ hostname: '127.0.0.1', port: r2.httpPort }] },
  });
  const log = new CapturedLog();
  const agent = await startAgent(config, bootstrap, world, { log: log.logger });
  agents.push(agent);
  await produce(bootstrap, rows(world, 'logline_to_batches', 0, 300));
  await waitFor(async () => (await counts(r1.url, world.database, 'logline_to_batches')).dedup === 300, {
    timeoutMs: 60_000,
    message: 'rows on the replica that is up',
  });

  await r2.restart();
  await produce(bootstrap, rows(world, 'logline_to_batches', 300, 100));
  await waitFor(
    async () =>
      (await counts(r2.url, world.database, 'logline_to_batches').catch(() => ({ dedup: -1 }))).dedup === 400,
    {
      timeoutMs: 60_000,
      message: 'the returned replica has the tables and every row',
      observe: () => log.messages().slice(-3),
    },
  );
  assert.ok(
    log.lines.some((l) => l.event === 'clickhouse-replica-schema' && l.replica === r2.url),
    'the agent created the tables on the returned replica',
  );
  for (const server of [r1, r2])
    assert.deepEqual(
      await identities(server.url, world, 'logline_to_batches'),
      { n: 400, ids: 400, lo: 0, hi: 399 },
      `${server.url}: every row exactly once`,
    );
  assert.equal(agent.outages, 0, 'the agent never needed the replica that was down');
  console.log(`replica back after the agent started: ${Date.now() - t0} ms`);
});

async function fetchJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
