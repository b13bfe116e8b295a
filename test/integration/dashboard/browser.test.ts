import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import {
  chartHasData,
  PIPELINE_CHARTS,
  DashboardBrowser,
  points,
  screenshot,
  skipWithoutChromium as skip,
} from './browser-pages.ts';
import { LiveWorkerMetrics } from './live-metrics.ts';
import { STAGES, createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

describe('dashboard in a real browser', { skip }, () => {
  let dataset: MonitoringDataset;
  let metrics: LiveWorkerMetrics;
  let dashboard: Dashboard;
  let browser: DashboardBrowser;
  const pageErrors = new Map<Page, string[]>();

  before(async () => {
    const ch = await testClickHouse();
    dataset = await createDataset(ch.url);
    metrics = new LiveWorkerMetrics(Object.values(STAGES));
    dashboard = await startDashboard({
      port: Number(process.env.HAMSTRING_TEST_DASHBOARD_PORT ?? 0),
      clickhouse: dataset.target,
      metricsSources: metrics.sources(),
      refreshMs: 500,
      windowMs: 5 * 60_000,
      log: silentLogger(),
    });
    browser = await DashboardBrowser.launch(dashboard.url);
  });

  after(async () => {
    await browser?.close();
    await dashboard?.close();
    metrics?.stop();
    if (dataset) await dropDataset(dataset);
  });

  async function open(path: string): Promise<Page> {
    const { page, errors } = await browser.open(path);
    pageErrors.set(page, errors);
    return page;
  }

  function jsErrors(page: Page): string[] {
    return pageErrors.get(page) ?? [];
  }

  test('the pipeline page charts throughput, latency, fill levels, lag and transactions with data', async () => {
    const page = await open('/');
    for (const id of PIPELINE_CHARTS) assert.ok((await chartHasData(page, id)) > 0, id);
    await page.locator('#workers-table tr').nth(3).waitFor();
    assert.equal(await page.locator('#workers-table tr').count(), 4, 'one row per stage');
    assert.equal(
      await page.locator('#workers-table .cond.on[data-condition="aborts_while_lag_grows"]').count(),
      1,
    );
    assert.equal(await page.locator('#workers-table .cond').count(), 20, 'five conditions per stage');
    const latencyRows = await page.locator('#latency-table tr td:first-child').allTextContents();
    assert.deepEqual(latencyRows, ['collector', 'prefilter', 'inspector', 'detector', 'alert']);
    assert.equal(await page.locator('#cards .card').first().locator('.value').textContent(), '120');
    // Let the metric charts gather a few more samples for the picture.
    await page.waitForFunction(`${points('chart-records')} >= 40`);
    await screenshot(page, 'pipeline.png');
    assert.deepEqual(jsErrors(page), []);
    await page.close();
  });

  test('the alerts page lists every alert, filters by host, and shows a new alert as it arrives', async () => {
    const page = await open('/alerts');
    const alerts = dataset.counts.alerts!;
    await page.waitForFunction(`document.querySelectorAll('#alerts-table tr').length === ${alerts}`);
    assert.ok((await chartHasData(page, 'chart-scores')) === alerts);

    const host = '10.0.0.99';
    await dataset.insert('alerts', [
      {
        client_ip: host,
        alert_timestamp: Date.now(),
        suspicious_batch_id: 'suspicious-new',
        overall_score: 0.93,
        domain_names: JSON.stringify(['kq3vhz9x.biz']),
        result: JSON.stringify([{ family: 'necurs' }]),
      },
    ]);
    const row = page.locator(`#alerts-table tr[data-host="${host}"]`);
    await row.waitFor({ timeout: 20_000 });
    assert.match((await row.textContent()) ?? '', /0\.930.*necurs.*kq3vhz9x\.biz/);
    assert.equal(
      await page.locator('#alerts-table tr').first().getAttribute('data-host'),
      host,
      'newest first',
    );
    await screenshot(page, 'alerts.png');

    const infected = dataset.infected[0]!;
    await page.fill('#host', infected);
    await page.click('#filter button');
    const rows = `[...document.querySelectorAll('#alerts-table tr')]`;
    await page.waitForFunction(
      `${rows}.length > 0 && ${rows}.every((r) => r.dataset.host === ${JSON.stringify(infected)})`,
    );
    assert.deepEqual(jsErrors(page), []);
    await page.close();
  });

  test("the host page shows an infected host's lines through every stage to the alert", async () => {
    const host = dataset.infected[0]!;
    const page = await open(`/host?ip=${host}`);
    assert.ok((await chartHasData(page, 'chart-host-latency')) > 0);
    await page.locator('#lines-body tr').first().waitFor();
    const stages = await page.locator('#lines-head th').allTextContents();
    assert.deepEqual(stages.slice(4), ['collector', 'prefilter', 'inspector', 'detector', 'alert']);
    assert.equal(await page.locator('#lines-body tr').count(), 20, 'all 20 lines of the host');
    assert.ok((await page.locator('#host-alerts tr').count()) > 0);
    assert.ok((await page.locator('#hosts a').count()) >= 6);
    await screenshot(page, 'host.png');
    assert.deepEqual(jsErrors(page), []);
    await page.close();
  });
});
