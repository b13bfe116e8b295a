import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import type { TestClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { startOwnClickHouse } from '../../helpers/own-clickhouse.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { committedMatchesEnd } from '../../support/pipeline-harness.ts';
import {
  CapturedLog,
  counts,
  monitoringWorld,
  produce,
  rows,
  startAgent,
  testConfig,
  type MonitoringWorld,
} from './support.ts';

let bootstrap: string;
// A ClickHouse of its own: the tests kill and freeze it, which would fail every file beside this one.
let ch: TestClickHouse;
before(async () => {
  const [k, c] = await Promise.all([testKafka(), startOwnClickHouse('agent-recovery', 70)]);
  bootstrap = k.bootstrap;
  ch = c;
});
after(async () => {
  await ch?.server.stop();
});

describe('monitoring agent recovery', () => {
  const agents: MonitoringAgent[] = [];
  const children: ChildProcess[] = [];
  let frozen: number | undefined;
  /** Runs the agent in a child process that kills itself (137) where `crashAt` says; its stdout. */
  async function runCrashingAgent(world: MonitoringWorld, crashAt: Record<string, string>): Promise<string> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./agent-process.ts', import.meta.url))],
      {
        env: {
          ...process.env,
          BOOTSTRAP: bootstrap,
          CLICKHOUSE_URL: ch.url,
          PREFIX: world.prefix,
          DATABASE: world.database,
          GROUP: world.group,
          TABLES: 'batch_timestamps',
          ...crashAt,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    assert.equal(await exited, 137, out);
    return out;
  }
  after(async () => {
    if (frozen !== undefined) process.kill(frozen, 'SIGCONT');
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.stop()));
    if (!ch.server.isRunning()) await ch.server.restart();
  });

  test('ClickHouse killed mid-stream and restarted: the consumer is closed meanwhile, every row is there exactly once after', async () => {
    const world = await monitoringWorld(bootstrap, ['logline_to_batches', 'fill_levels']);
    const log = new CapturedLog();
    const agent = await startAgent(testConfig(bootstrap, ch.url), bootstrap, world, { log: log.logger });
    agents.push(agent);
    await produce(bootstrap, rows(world, 'logline_to_batches', 0, 800));
    await waitFor(async () => (await counts(ch.url, world.database, 'logline_to_batches')).dedup === 800, {
      timeoutMs: 60_000,
      message: 'first 800 rows in ClickHouse',
    });

    await ch.server.kill();
    await produce(bootstrap, [
      ...rows(world, 'logline_to_batches', 800, 700),
      ...rows(world, 'fill_levels', 0, 300),
    ]);
    await waitFor(() => log.messages().filter((m) => m === 'clickhouse: unreachable, retrying').length >= 2, {
      timeoutMs: 60_000,
      message: 'a visible ClickHouse reconnect loop',
      observe: () => log.messages().slice(-5),
    });
    const msgs = log.messages();
    const closed = msgs.indexOf('kafka: consumer closed; uncommitted batch discarded');
    const retrying = msgs.indexOf('clickhouse: unreachable, retrying');
    assert.ok(closed >= 0 && closed < retrying, 'the Kafka consumer is closed before waiting for ClickHouse');
    assert.equal(agent.outages, 1);
    assert.equal(await agent.metrics.outages.get().then((m) => m.values[0]?.value), 1);
    assert.ok(((await agent.metrics.reconnectAttempts.get()).values[0]?.value ?? 0) >= 3);
    assert.equal(agent.worker.status().ready, false, 'no consumer while ClickHouse is away');

    await ch.server.restart();
    await waitFor(
      async () =>
        (await counts(ch.url, world.database, 'logline_to_batches')).dedup === 1_500 &&
        (await counts(ch.url, world.database, 'fill_levels')).dedup === 300,
      { timeoutMs: 90_000, message: 'all rows after the restart', observe: () => log.messages().slice(-5) },
    );
    for (const [table, n] of [
      ['logline_to_batches', 1_500],
      ['fill_levels', 300],
    ] as const) {
      const c = await counts(ch.url, world.database, table);
      assert.equal(c.dedup, n, `${table} dedup`);
      assert.equal(c.distinct, n, `${table} distinct identities`);
    }
    const reconnected = log.lines.filter((l) => l.event === 'clickhouse-connected');
    assert.equal(reconnected.length, 2, 'connected at start and once after the outage');
    assert.equal(agent.worker.status().ready, true);
    await agent.stop();
  });

  test('a ClickHouse that stops answering (SIGSTOP) is bounded by operation_timeout_seconds and recovered like a crash', async () => {
    const world = await monitoringWorld(bootstrap, ['fill_levels'], 1);
    const log = new CapturedLog();
    const agent = await startAgent(testConfig(bootstrap, ch.url), bootstrap, world, { log: log.logger });
    agents.push(agent);
    await produce(bootstrap, rows(world, 'fill_levels', 0, 100));
    await waitFor(async () => (await counts(ch.url, world.database, 'fill_levels')).dedup === 100, {
      timeoutMs: 60_000,
      message: 'first rows',
    });
    const pid = ch.server.pid();
    assert.ok(pid !== undefined);
    process.kill(pid, 'SIGSTOP');
    frozen = pid;
    const t0 = Date.now();
    await produce(bootstrap, rows(world, 'fill_levels', 100, 100));
    await waitFor(() => agent.outages === 1, { timeoutMs: 30_000, message: 'the hanging insert times out' });
    const waited = Date.now() - t0;
    assert.ok(waited < 15_000, `insert bounded by operation_timeout_seconds (5 s), took ${waited} ms`);
    await waitFor(() => log.messages().includes('clickhouse: unreachable, retrying'), {
      timeoutMs: 30_000,
      message: 'connect attempts bounded by connect_timeout_seconds',
    });
    process.kill(pid, 'SIGCONT');
    frozen = undefined;
    await waitFor(async () => (await counts(ch.url, world.database, 'fill_levels')).dedup === 200, {
      timeoutMs: 60_000,
      message: 'all 200 rows after SIGCONT',
    });
    assert.equal((await counts(ch.url, world.database, 'fill_levels')).distinct, 200);
    await agent.stop();
  });

  test('an agent started while ClickHouse is down waits visibly without consuming, then delivers everything', async () => {
    const world = await monitoringWorld(bootstrap, ['alerts'], 1);
    await produce(bootstrap, rows(world, 'alerts', 0, 120));
    await ch.server.kill();
    const log = new CapturedLog();
    const starting = startAgent(testConfig(bootstrap, ch.url), bootstrap, world, { log: log.logger });
    await waitFor(() => log.messages().filter((m) => m === 'clickhouse: unreachable, retrying').length >= 2, {
      timeoutMs: 30_000,
      message: 'the start waits in a visible reconnect loop',
    });
    assert.equal(
      log.lines.some((l) => String(l.msg).startsWith('kafka:')),
      false,
      'no Kafka consumer while ClickHouse is away',
    );
    await ch.server.restart();
    const agent = await starting;
    agents.push(agent);
    await waitFor(async () => (await counts(ch.url, world.database, 'alerts')).dedup === 120, {
      timeoutMs: 60_000,
      message: 'all 120 rows once ClickHouse is back',
    });
    await agent.stop();
  });

  test('an agent that crashes between insert and commit leaves no visible duplicate after the replay', async () => {
    const world = await monitoringWorld(bootstrap, ['batch_timestamps'], 1);
    await produce(bootstrap, rows(world, 'batch_timestamps', 0, 1_000));
    // Kafka batches of up to 500 = up to 10 inserts of 50: the 13th insert is past the first batch.
    const out = await runCrashingAgent(world, { EXIT_AFTER_INSERTS: '13' });
    assert.match(out, /CRASHING after 13 inserts/);
    const before = await counts(ch.url, world.database, 'batch_timestamps');
    assert.ok(before.distinct > 0 && before.distinct < 1_000, `${before.distinct} rows before the crash`);

    const agent = await startAgent(testConfig(bootstrap, ch.url), bootstrap, world);
    agents.push(agent);
    await waitFor(async () => (await counts(ch.url, world.database, 'batch_timestamps')).dedup === 1_000, {
      timeoutMs: 90_000,
      message: 'all 1000 rows after the replay',
    });
    const inserted = (await agent.metrics.rowsInserted.get()).values.reduce((s, v) => s + v.value, 0);
    // The crashed batch's rows were inserted but not committed: the new agent inserts them again.
    assert.ok(before.distinct + inserted > 1_000, `replayed: ${before.distinct} before + ${inserted} after`);
    const after = await counts(ch.url, world.database, 'batch_timestamps');
    assert.equal(after.dedup, 1_000);
    assert.equal(after.distinct, 1_000);
    await agent.stop();
  });

  test('an agent killed after every insert of a batch and before its offset commit (beforeCommit hook): the replayed batch collapses', async () => {
    const world = await monitoringWorld(bootstrap, ['batch_timestamps'], 1);
    await produce(bootstrap, rows(world, 'batch_timestamps', 0, 1_000));
    const out = await runCrashingAgent(world, { EXIT_BEFORE_COMMIT: '2' });
    const crashed = /CRASHING before commit 2 \((\d+) records inserted\)/.exec(out);
    assert.ok(crashed, out);
    const uncommitted = Number(crashed[1]);
    const before = await counts(ch.url, world.database, 'batch_timestamps');
    // The second batch is wholly in ClickHouse, its offsets are not committed.
    assert.ok(before.distinct >= uncommitted && before.distinct <= 1_000, `${before.distinct} rows before`);

    const agent = await startAgent(testConfig(bootstrap, ch.url), bootstrap, world);
    agents.push(agent);
    const admin = createAdmin(bootstrap);
    try {
      // Every row was in ClickHouse before the restart; wait for the replay to commit instead.
      await waitFor(
        async () => (await committedMatchesEnd(admin, world.group, `${world.prefix}batch_timestamps`)).ok,
        { timeoutMs: 90_000, message: 'the new agent committed to the end' },
      );
    } finally {
      admin.close();
    }
    const inserted = (await agent.metrics.rowsInserted.get()).values.reduce((s, v) => s + v.value, 0);
    // The new agent starts at the end of the first batch: the uncommitted batch is inserted again.
    assert.ok(
      before.distinct + inserted >= 1_000 + uncommitted,
      `replayed the uncommitted batch: ${before.distinct} before + ${inserted} after, ${uncommitted} uncommitted`,
    );
    const after = await counts(ch.url, world.database, 'batch_timestamps');
    assert.equal(after.dedup, 1_000);
    assert.equal(after.distinct, 1_000);
    await agent.stop();
  });
});
