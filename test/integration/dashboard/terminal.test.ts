import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ClickHouseReader } from '../../../src/app/dashboard/clickhouse-reader.ts';
import { DashboardData } from '../../../src/app/dashboard/dashboard-data.ts';
import { DashboardQueries } from '../../../src/app/dashboard/dashboard-queries.ts';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import { collectRunSummary, pipelineSnapshotSource } from '../../../src/app/terminal/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

describe('terminal snapshots and the run summary on a real ClickHouse', () => {
  let dataset: MonitoringDataset;
  let dashboard: Dashboard;

  before(async () => {
    dataset = await createDataset((await testClickHouse()).url);
    dashboard = await startDashboard({ port: 0, clickhouse: dataset.target, log: silentLogger() });
  });

  after(async () => {
    await dashboard?.close();
    if (dataset) await dropDataset(dataset);
  });

  test('snapshots carry the worker metrics, open batches, and each alert exactly once as it arrives', async () => {
    const logserver = new WorkerMetrics({ stage: 'log_storage.logserver', instance: 'l1' });
    logserver.records.inc({ direction: 'in' }, 1234);
    await dataset.insert('fill_levels', [
      {
        timestamp: dataset.now,
        stage: 'log_collection.collector',
        entry_type: 'open_batches',
        entry_count: 3,
      },
    ]);
    const source = pipelineSnapshotSource({ metricsSources: [logserver.registry], data: dashboard.data });
    const first = await source();
    assert.equal(first.linesIn, 1234);
    assert.equal(first.openBatches, 3);
    assert.equal(first.stages[0]?.stage, 'log_storage.logserver');
    assert.equal(first.alerts.length, dataset.counts.alerts);
    assert.deepEqual((await source()).alerts, []);
    await dataset.insert('alerts', [
      {
        client_ip: '10.0.0.77',
        // The fixture's alerts reach up to a second past its `now`; a newer alert comes after them.
        alert_timestamp: dataset.now + 5_000,
        suspicious_batch_id: 'late',
        overall_score: 0.66,
        domain_names: '["late.example"]',
        result: '[]',
      },
    ]);
    // Its detector comes from the suspicious batch's row at the detector stage; the view waits for it.
    await dataset.insert('suspicious_batch_timestamps', [
      {
        suspicious_batch_id: 'late',
        client_ip: '10.0.0.77',
        stage: 'data_analysis.detector',
        instance_name: 'dga_detector',
        status: 'detected',
        timestamp: dataset.now + 5_000,
        is_active: false,
        message_count: 3,
      },
    ]);
    // Queries are shared for half a refresh, so the new row shows at the latest one refresh later.
    const arrived: { host: string; score: number; domains: string[]; detector: string }[] = [];
    await waitFor(
      async () => {
        arrived.push(...(await source()).alerts);
        return arrived.length > 0;
      },
      { timeoutMs: 10_000, message: 'the new alert in a snapshot' },
    );
    arrived.push(...(await source()).alerts);
    assert.deepEqual(
      arrived.map((a) => [a.host, a.score, a.domains, a.detector]),
      [['10.0.0.77', 0.66, ['late.example'], 'dga_detector']],
    );
  });

  test('the summary finds the infected hosts, names the missed one and the falsely accused one', async () => {
    const truth = {
      infected: new Map([
        [dataset.infected[0]!, 'conficker'],
        [dataset.infected[1]!, 'dns-tunnel'],
        ['10.0.0.8', 'necurs'],
      ]),
    };
    const own = await createDataset((await testClickHouse()).url);
    const reader = new ClickHouseReader(own.target);
    try {
      await own.insert('alerts', [
        {
          client_ip: '10.0.0.77',
          alert_timestamp: own.now,
          suspicious_batch_id: 'benign-host',
          overall_score: 0.6,
          domain_names: '[]',
          result: '[]',
        },
      ]);
      const data = new DashboardData(reader, new DashboardQueries(own.target.database), undefined, 60_000);
      const summary = await collectRunSummary({ data, truth });
      assert.equal(summary.linesIn, own.counts.server_logs);
      assert.equal(summary.batches, 6);
      assert.equal(summary.suspiciousBatches, own.counts.suspicious_batches_to_batch);
      assert.equal(summary.alerts, own.counts.alerts);
      assert.deepEqual(
        summary.found.map((f) => [f.host, f.infectedWith, f.familiesReported]),
        [
          [dataset.infected[0], 'conficker', ['conficker']],
          [dataset.infected[1], 'dns-tunnel', ['tunnel']],
        ],
      );
      assert.deepEqual(summary.missed, [{ host: '10.0.0.8', infectedWith: 'necurs' }]);
      assert.deepEqual(summary.falselyAccused, [{ host: '10.0.0.77', alerts: 1 }]);
    } finally {
      await reader.close();
      await dropDataset(own);
    }
  });
});
