import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import type { HostData, PipelineData } from '../../../src/app/dashboard/dashboard-data.ts';
import type { AlertView } from '../../../src/app/dashboard/alert-view.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { BATCH_MS, DELAYS, createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

describe('dashboard JSON API on a real ClickHouse', () => {
  let dataset: MonitoringDataset;
  let dashboard: Dashboard;
  let metricsServer: Server;
  const worker = new WorkerMetrics({ stage: 'data_analysis.detector', instance: 'detector-1' });

  before(async () => {
    const ch = await testClickHouse();
    dataset = await createDataset(ch.url);
    // A worker's /metrics endpoint, scraped over HTTP like a worker process's health server.
    metricsServer = createServer((_req, res) => {
      void worker.registry.metrics().then((text) => res.end(text));
    });
    await new Promise<void>((resolve) => metricsServer.listen(0, '127.0.0.1', resolve));
    const metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
    dashboard = await startDashboard({
      port: 0,
      clickhouse: dataset.target,
      metricsSources: [metricsUrl, 'http://127.0.0.1:9/metrics'],
      refreshMs: 200,
      windowMs: 5 * 60_000,
      log: silentLogger(),
    });
  });

  after(async () => {
    await dashboard?.close();
    metricsServer?.close();
    if (dataset) await dropDataset(dataset);
  });

  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(new URL(path, dashboard.url));
    assert.equal(res.status, 200, `${path}: ${res.status}`);
    return (await res.json()) as T;
  };

  test('totals count each monitoring row once, also after the agent replays rows', async () => {
    const before = await get<PipelineData>('/api/pipeline');
    assert.deepEqual(before.errors, []);
    assert.deepEqual(before.totals, {
      linesIn: dataset.counts.server_logs,
      linesValid: dataset.counts.loglines,
      linesFailed: 1,
      batches: 6,
      suspiciousBatches: dataset.counts.suspicious_batches_to_batch,
      alerts: dataset.counts.alerts,
      alertedHosts: dataset.infected.length,
    });
    // The same alert row with the same identity, as a replay of the agent writes it.
    await dataset.replay('alerts', 0, [
      {
        client_ip: dataset.infected[0]!,
        alert_timestamp: dataset.now,
        suspicious_batch_id: 'replayed',
        overall_score: 0.5,
        domain_names: '[]',
        result: '[]',
      },
    ]);
    const afterReplay = await get<PipelineData>('/api/pipeline');
    assert.equal(afterReplay.totals?.alerts, dataset.counts.alerts);
  });

  test('latency from line in to each stage and to the alert follows the batches', async () => {
    const { latency } = await get<PipelineData>('/api/pipeline');
    const byStage = Object.fromEntries((latency ?? []).map((l) => [l.stage, l]));
    assert.deepEqual(
      (latency ?? []).map((l) => l.stage),
      [
        'log_collection.collector',
        'log_filtering.prefilter',
        'data_inspection.inspector',
        'data_analysis.detector',
        'alert',
      ],
    );
    // The first line of a batch waits the whole batch interval, then each stage's delay.
    assert.equal(byStage['log_collection.collector']?.maxMs, 0);
    assert.equal(byStage['log_filtering.prefilter']?.maxMs, BATCH_MS + DELAYS.prefilter);
    assert.equal(byStage['data_inspection.inspector']?.maxMs, BATCH_MS + DELAYS.inspector);
    assert.equal(byStage['data_analysis.detector']?.maxMs, BATCH_MS + DELAYS.detector);
    assert.equal(byStage.alert?.maxMs, BATCH_MS + DELAYS.alert);
    // Only the infected hosts' lines reach the detector and an alert: 2 hosts of 6.
    assert.equal(byStage['data_analysis.detector']?.lines, (dataset.counts.loglines! * 2) / 6);
    assert.equal(byStage.alert?.lines, (dataset.counts.loglines! * 2) / 6);
    assert.equal(byStage['log_filtering.prefilter']?.lines, dataset.counts.loglines);
  });

  test('time series cover the window with every line in and every stage', async () => {
    const d = await get<PipelineData>('/api/pipeline');
    const sum = (values: (number | null)[]) => values.reduce<number>((a, v) => a + (v ?? 0), 0);
    const volume = Object.fromEntries(d.volume!.series.map((s) => [s.name, sum(s.values)]));
    assert.deepEqual(volume, {
      'lines in': dataset.counts.server_logs,
      failed: 1,
      alerts: dataset.counts.alerts,
    });
    const lines = Object.fromEntries(d.stageLines!.series.map((s) => [s.name, sum(s.values)]));
    assert.equal(lines['log_collection.collector'], dataset.counts.loglines);
    assert.equal(lines.alert, (dataset.counts.loglines! * 2) / 6);
    assert.equal(d.volume!.t.length, d.stageLines!.t.length);
    assert.equal(d.fillLevels!.series[0]?.name, 'log_collection.collector total_loglines');
    assert.deepEqual([...new Set(d.workerEvents!.map((e) => e.event))], ['committed']);
  });

  test('worker metrics are scraped over HTTP, and an unreachable source is reported, not fatal', async () => {
    worker.records.inc({ direction: 'in' }, 500);
    worker.commits.inc(7);
    worker.lag.set(42);
    worker.alert.set({ condition: 'no_commit_while_input_arrives' }, 1);
    await waitFor(
      async () => (await get<PipelineData>('/api/pipeline')).metrics?.latest[0]?.recordsIn === 500,
      { timeoutMs: 10_000, message: 'the dashboard samples the worker metrics' },
    );
    const { metrics } = await get<PipelineData>('/api/pipeline');
    const detector = metrics!.latest[0]!;
    assert.equal(detector.stage, 'data_analysis.detector');
    assert.equal(detector.commits, 7);
    assert.equal(detector.lag, 42);
    assert.equal(detector.alerts.no_commit_while_input_arrives, 1);
    assert.equal(detector.alerts.aborts_while_lag_grows, 0);
    assert.deepEqual(
      metrics!.sources.map((s) => s.ok),
      [true, false],
    );
  });

  test('alerts come newest first with detector, family and domains, and filter by host', async () => {
    const all = await get<AlertView[]>('/api/alerts');
    assert.equal(all.length, dataset.counts.alerts);
    assert.ok(all.every((a, i) => i === 0 || all[i - 1]!.time >= a.time));
    const first = all.find((a) => a.host === dataset.infected[0]);
    assert.equal(first?.detector, 'dga_detector');
    assert.equal(first?.family, 'conficker');
    assert.equal(first?.domains.length, 2);
    const one = await get<AlertView[]>(`/api/alerts?host=${dataset.infected[1]}`);
    assert.ok(one.length > 0 && one.every((a) => a.host === dataset.infected[1]));
    assert.deepEqual(await get<AlertView[]>(`/api/alerts?host=${dataset.benign[0]}`), []);
  });

  test("one host's lines show when each reached each stage", async () => {
    const host = await get<HostData>(`/api/host?ip=${dataset.infected[0]}`);
    assert.deepEqual(host.errors, []);
    assert.equal(host.lines.length, 20);
    assert.deepEqual(host.stages, [
      'log_collection.collector',
      'log_filtering.prefilter',
      'data_inspection.inspector',
      'data_analysis.detector',
      'alert',
    ]);
    for (const line of host.lines) {
      assert.equal(line.stages['log_collection.collector']?.status, 'batched');
      const alert = line.stages.alert!.latencyMs;
      assert.equal(alert - line.stages['data_analysis.detector']!.latencyMs, DELAYS.alert - DELAYS.detector);
      assert.match(String(line.fields.domain_name), /qzkvbw\.com$/);
    }
    const benign = await get<HostData>(`/api/host?ip=${dataset.benign[0]}`);
    assert.deepEqual(benign.stages, [
      'log_collection.collector',
      'log_filtering.prefilter',
      'data_inspection.inspector',
    ]);
  });

  test('pages, static files and the charting library are served; anything else is 404', async () => {
    for (const path of [
      '/',
      '/alerts',
      '/host',
      '/static/common.js',
      '/static/app.css',
      '/vendor/uPlot.esm.js',
    ]) {
      const res = await fetch(new URL(path, dashboard.url));
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    }
    for (const path of ['/static/../server.ts', '/static/nope.js', '/etc/passwd']) {
      const res = await fetch(new URL(path, dashboard.url));
      assert.equal(res.status, 404, path);
      await res.arrayBuffer();
    }
  });
});
