import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { ClickHouseConnection } from '../../../src/monitoring/clickhouse-connection.ts';
import { DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import { TABLES, createTableSql, tableDef, type TableDef } from '../../../src/monitoring/tables.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { committedMatchesEnd, readCommitted } from '../../support/pipeline-harness.ts';
import { command, counts, monitoringWorld, produce, query, rows, startAgent, testConfig } from './support.ts';

let bootstrap: string;
let chUrl: string;
before(async () => {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = k.bootstrap;
  chUrl = ch.url;
});

describe('monitoring agent on real Kafka and ClickHouse', () => {
  const agents: MonitoringAgent[] = [];
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
  });

  test('rows produced to clickhouse_* topics arrive exactly once and the offsets are committed to the end', async () => {
    const world = await monitoringWorld(bootstrap, ['logline_to_batches', 'batch_timestamps', 'alerts']);
    const expected = { logline_to_batches: 1_200, batch_timestamps: 430, alerts: 77 };
    await produce(bootstrap, [
      ...rows(world, 'logline_to_batches', 0, expected.logline_to_batches),
      ...rows(world, 'batch_timestamps', 0, expected.batch_timestamps),
      ...rows(world, 'alerts', 0, expected.alerts),
    ]);
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world);
    agents.push(agent);
    for (const [table, n] of Object.entries(expected)) {
      await waitFor(async () => (await counts(chUrl, world.database, table)).dedup === n, {
        timeoutMs: 60_000,
        message: `${n} rows in ${table}`,
        observe: () => agent.worker.status(),
      });
      const c = await counts(chUrl, world.database, table);
      assert.deepEqual(c, { raw: n, dedup: n, distinct: n }, table);
    }
    const admin = createAdmin(bootstrap);
    try {
      await waitFor(
        async () => {
          for (const t of Object.keys(expected))
            if (!(await committedMatchesEnd(admin, world.group, `${world.prefix}${t}`)).ok) return false;
          return true;
        },
        { timeoutMs: 30_000, message: 'committed offsets reach the end of every table topic' },
      );
    } finally {
      admin.close();
    }
    // Timestamps arrive as epoch ms whether the stage wrote numbers or ISO strings.
    const [alert] = await query<{ alert_timestamp: string }>(
      chUrl,
      `SELECT alert_timestamp FROM \`${world.database}\`.alerts_dedup WHERE src_offset = 5`,
    );
    assert.equal(Number(alert?.alert_timestamp), 1_700_000_000_005);
    await agent.stop();
  });

  test('malformed rows go to the dead-letter topic with the reason in headers, and the rest flows', async () => {
    const world = await monitoringWorld(bootstrap, ['logline_to_batches'], 1);
    const topic = `${world.prefix}logline_to_batches`;
    const good = rows(world, 'logline_to_batches', 0, 100);
    const base = JSON.parse(String(good[0]!.value)) as Record<string, unknown>;
    const bad = [
      { topic, value: '{"not json' },
      { topic, value: JSON.stringify({ ...base, src_offset: 10_000, batch_id: undefined }) },
      { topic, value: JSON.stringify({ ...base, src_offset: 10_001, batch_id: 42 }) },
      { topic, value: JSON.stringify({ ...base, src_offset: 10_002, surprise: 'column' }) },
    ];
    await produce(bootstrap, [...good.slice(0, 50), ...bad, ...good.slice(50)]);
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world);
    agents.push(agent);
    await waitFor(async () => (await counts(chUrl, world.database, 'logline_to_batches')).dedup === 100, {
      timeoutMs: 60_000,
      message: 'the 100 good rows in ClickHouse',
    });
    const dead = await readCommitted(bootstrap, world.dlt, 4, 30_000);
    assert.equal(dead.length, 4);
    const kinds = dead.map((d) => d.headers[DLT_HEADERS.errorKind]?.toString()).sort();
    assert.deepEqual(kinds, ['bad-json', 'schema', 'schema', 'schema']);
    for (const d of dead) {
      assert.equal(d.headers[DLT_HEADERS.topic]?.toString(), topic);
      assert.ok(d.headers[DLT_HEADERS.errorMessage]?.toString().length);
    }
    assert.equal((await counts(chUrl, world.database, 'logline_to_batches')).raw, 100);
    await agent.stop();
  });

  test('tables are created idempotently and a column the schema gained is added on start', async () => {
    const world = await monitoringWorld(bootstrap, ['alerts']);
    const full = tableDef('alerts');
    const old: TableDef = { name: 'alerts', columns: full.columns.filter((c) => c.name !== 'result') };
    await command(chUrl, `CREATE DATABASE IF NOT EXISTS \`${world.database}\``);
    await command(chUrl, createTableSql(world.database, old));
    await produce(bootstrap, rows(world, 'alerts', 0, 10));
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world);
    agents.push(agent);
    const cols = await query<{ name: string }>(
      chUrl,
      `SELECT name FROM system.columns WHERE database = '${world.database}' AND table = 'alerts'`,
    );
    assert.ok(
      cols.some((c) => c.name === 'result'),
      'result column added',
    );
    await waitFor(async () => (await counts(chUrl, world.database, 'alerts')).dedup === 10, {
      timeoutMs: 60_000,
      message: 'rows with the new column inserted',
    });
    await agent.stop();

    const conn = await ClickHouseConnection.open({
      url: chUrl,
      database: world.database,
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 10_000,
    });
    try {
      const first = await conn.ensureTables(TABLES, silentLogger());
      assert.equal(first.created.length, TABLES.length - 1, 'the other tables are created');
      const again = await conn.ensureTables(TABLES, silentLogger());
      assert.deepEqual(again, { created: [], added: [] });
    } finally {
      await conn.close();
    }
  });
});
