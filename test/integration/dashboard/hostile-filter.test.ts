import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import type { AlertView } from '../../../src/app/dashboard/alert-view.ts';
import type { HostData } from '../../../src/app/dashboard/dashboard-data.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

/** Filter values that would change the query if they were pasted into SQL text. */
const SQL_LOOKING = [
  "' OR 1=1 --",
  "10.0.0.5' OR '1'='1",
  "10.0.0.5\\' OR 1=1 --",
  "'; DROP TABLE loglines; --",
  "' UNION ALL SELECT client_ip, 0, '', 0, '', '', '' FROM system.one --",
  '{host:String}',
  "10.0.0.5'",
];

describe('dashboard host filter on a real ClickHouse: SQL-looking values stay values', () => {
  let dataset: MonitoringDataset;
  let dashboard: Dashboard;
  before(async () => {
    const ch = await testClickHouse();
    dataset = await createDataset(ch.url);
    dashboard = await startDashboard({ port: 0, clickhouse: dataset.target, log: silentLogger() });
  });
  after(async () => {
    await dashboard?.close();
    if (dataset) await dropDataset(dataset);
  });

  const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(new URL(path, dashboard.url));
    return { status: res.status, body: (await res.json()) as T };
  };

  test('a real host finds its alerts; each hostile value finds none and breaks nothing', async () => {
    const real = await get<AlertView[]>(`/api/alerts?host=${dataset.infected[0]}`);
    assert.equal(real.status, 200);
    assert.ok(real.body.length > 0);
    for (const value of SQL_LOOKING) {
      const q = encodeURIComponent(value);
      const alerts = await get<AlertView[]>(`/api/alerts?host=${q}`);
      assert.equal(alerts.status, 200, value);
      assert.deepEqual(alerts.body, [], value);
      const host = await get<HostData>(`/api/host?ip=${q}`);
      assert.equal(host.status, 200, value);
      assert.deepEqual(host.body.lines, [], value);
      assert.deepEqual(host.body.errors, [], value);
    }
    // The tables are all still there and whole.
    const after = await get<AlertView[]>(`/api/alerts?host=${dataset.infected[0]}`);
    assert.deepEqual(after.body, real.body);
  });
});
