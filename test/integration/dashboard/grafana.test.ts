import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';
import { GRAFANA_DIR, grafanaDashboards } from '../../../scripts/grafana-dashboards.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

interface Target {
  refId: string;
  datasource: { type: string };
  rawSql?: string;
  format?: number;
  expr?: string;
}
interface Panel {
  title: string;
  targets: Target[];
}

const dashboards = Object.entries(grafanaDashboards()).map(([file, generated]) => ({
  file,
  generated,
  committed: JSON.parse(readFileSync(new URL(file, GRAFANA_DIR), 'utf8')) as { panels: Panel[] },
}));

const targets = (type: string) =>
  dashboards.flatMap((d) =>
    d.committed.panels.flatMap((p) =>
      p.targets.filter((t) => t.datasource.type === type).map((t) => ({ file: d.file, panel: p.title, t })),
    ),
  );

test('the committed Grafana dashboards are what scripts/grafana-dashboards.ts writes', () => {
  for (const d of dashboards)
    assert.deepEqual(d.committed, d.generated, `${d.file}: run npm run grafana:dashboards`);
});

test('every Prometheus panel reads metrics the workers export', async () => {
  const exported = new Set(
    (await new WorkerMetrics({ stage: 's', instance: 'i' }).registry.getMetricsAsJSON()).flatMap((m) =>
      String(m.type) === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
    ),
  );
  const prom = targets('prometheus');
  assert.ok(prom.length >= 8);
  for (const { panel, t } of prom) {
    const names = t.expr?.match(/hamstring_[a-z_]+/g) ?? [];
    assert.ok(names.length > 0, panel);
    for (const name of names) assert.ok(exported.has(name), `${panel}: ${name} is not a worker metric`);
  }
});

describe('Grafana ClickHouse panels on a real ClickHouse', () => {
  let dataset: MonitoringDataset;
  before(async () => {
    dataset = await createDataset((await testClickHouse()).url);
  });
  after(async () => {
    if (dataset) await dropDataset(dataset);
  });

  /** What the data source does with its macros and the dashboard variables, for the last 5 minutes. */
  function expand(sql: string, host: string): string {
    const to = Math.ceil(Date.now() / 1000) + 60;
    return sql
      .replaceAll('$__fromTime', `toDateTime(${to - 360})`)
      .replaceAll('$__toTime', `toDateTime(${to})`)
      .replaceAll('$__interval_s', '5')
      .replaceAll('${database}', dataset.target.database)
      .replaceAll('${host}', host);
  }

  test('every ClickHouse query runs; time series have a time column and rows; host panels find the host', async () => {
    const ch = targets('grafana-clickhouse-datasource');
    assert.ok(ch.length >= 10);
    for (const { panel, t } of ch) {
      const rs = await dataset.conn.client.query({
        query: expand(t.rawSql!, dataset.infected[0]!),
        format: 'JSONEachRow',
      });
      const rows = await rs.json<Record<string, unknown>>();
      assert.ok(rows.length > 0, `${panel}: rows`);
      if (t.format === 0)
        assert.match(String(rows[0]!.time), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, `${panel}: time column`);
      if (/host/i.test(panel) && 'client_ip' in rows[0]!)
        assert.ok(
          rows.every((r) => r.client_ip === dataset.infected[0]),
          `${panel}: only the host`,
        );
    }
  });

  test('with the host variable empty the alerts panels show every host', async () => {
    const table = targets('grafana-clickhouse-datasource').find((x) =>
      x.panel.startsWith('Alerts, newest first'),
    )!;
    const rs = await dataset.conn.client.query({ query: expand(table.t.rawSql!, ''), format: 'JSONEachRow' });
    const rows = await rs.json<{ host: string; detector: string }>();
    assert.equal(rows.length, dataset.counts.alerts);
    assert.deepEqual([...new Set(rows.map((r) => r.host))].sort(), [...dataset.infected].sort());
    assert.ok(rows.every((r) => r.detector === 'dga_detector'));
  });
});
