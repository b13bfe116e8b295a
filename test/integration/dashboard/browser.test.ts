import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { LiveWorkerMetrics } from './live-metrics.ts';
import { STAGES, createDataset, dropDataset, type MonitoringDataset } from './monitoring-rows.ts';

/** Debian's chromium (scripts/setup.sh installs it); playwright never downloads a browser here. */
const CHROMIUM = process.env.HAMSTRING_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = new URL('../../../var/screenshots/', import.meta.url);
const skip = existsSync(CHROMIUM)
  ? false
  : `chromium not installed at ${CHROMIUM} (apt-get install chromium, or run scripts/setup.sh)`;

describe('dashboard in a real browser', { skip }, () => {
  let dataset: MonitoringDataset;
  let metrics: LiveWorkerMetrics;
  let dashboard: Dashboard;
  let browser: Browser;

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
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await dashboard?.close();
    metrics?.stop();
    if (dataset) await dropDataset(dataset);
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(new URL(path, dashboard.url).href);
    // Page errors fail the test that opened the page, at its end.
    (page as Page & { jsErrors: string[] }).jsErrors = errors;
    return page;
  }

  /** Page-side expression: the non-empty points the chart panel counted (the pages set data-points). */
  const points = (id: string) =>
    `Number(document.getElementById(${JSON.stringify(id)})?.dataset.points ?? 0)`;

  function jsErrors(page: Page): string[] {
    return (page as Page & { jsErrors: string[] }).jsErrors;
  }

  /** Waits until the chart panel drew a canvas and counts non-empty points. */
  async function chartHasData(page: Page, id: string): Promise<number> {
    await page.waitForFunction(`${points(id)} > 0`, undefined, { timeout: 20_000 });
    const canvas = page.locator(`#${id} canvas`);
    assert.equal(await canvas.count(), 1, `${id} draws one canvas`);
    const box = await canvas.boundingBox();
    assert.ok(box && box.width > 200 && box.height > 100, `${id} canvas has a size: ${JSON.stringify(box)}`);
    return Number(await page.locator(`#${id}`).getAttribute('data-points'));
  }

  test('the pipeline page charts throughput, latency, fill levels, lag and transactions with data', async () => {
    const page = await open('/');
    for (const id of [
      'chart-volume',
      'chart-stage-lines',
      'chart-latency',
      'chart-fill',
      'chart-records',
      'chart-lag',
      'chart-txn',
    ])
      assert.ok((await chartHasData(page, id)) > 0, id);
    await page.locator('#workers-table tr').nth(3).waitFor();
    assert.equal(await page.locator('#workers-table tr').count(), 4, 'one row per stage');
    assert.equal(
      await page.locator('#workers-table .cond.on[data-condition="aborts_while_lag_grows"]').count(),
      1,
    );
    assert.equal(await page.locator('#workers-table .cond').count(), 16, 'four conditions per stage');
    const latencyRows = await page.locator('#latency-table tr td:first-child').allTextContents();
    assert.deepEqual(latencyRows, ['collector', 'prefilter', 'inspector', 'detector', 'alert']);
    assert.equal(await page.locator('#cards .card').first().locator('.value').textContent(), '120');
    // Let the metric charts gather a few more samples for the picture.
    await page.waitForFunction(`${points('chart-records')} >= 40`);
    await page.screenshot({ path: new URL('pipeline.png', SCREENSHOTS).pathname, fullPage: true });
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
    await page.screenshot({ path: new URL('alerts.png', SCREENSHOTS).pathname, fullPage: true });

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
    await page.screenshot({ path: new URL('host.png', SCREENSHOTS).pathname, fullPage: true });
    assert.deepEqual(jsErrors(page), []);
    await page.close();
  });
});
