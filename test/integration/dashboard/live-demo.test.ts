import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { dropDatabase } from '../monitoring/support.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { demoTestEdit, pipelineTestConfig } from '../pipeline/support.ts';
import {
  chartHasData,
  DashboardBrowser,
  PIPELINE_CHARTS,
  screenshot,
  skipWithoutChromium as skip,
} from './browser-pages.ts';

/**
 * A small demo: four DGA-infected hosts and one tunnelling host among 24, alerts within seconds
 * (1 s batch timeout); the shipped config runs the DGA detector and the Domainator.
 */
// Longer than the test: it stops the demo with Ctrl-C once the pages are checked.
const DEMO = { seed: 3, hosts: 24, rate: 60, duration: 180 };
const ALERT_LINE = /^\[hamstring\] ALERT host=(\S+) score=(\S+) (?:family=(?:"[^"]*"|\S+) )?detector=(\S+)/gm;

describe('the live demo (hamstring up --demo) in a real browser', { skip }, () => {
  let demo: ChildProcess | undefined;
  // Apart: a stderr chunk landing inside a stdout line would corrupt the alert lines parsed below.
  let out = '';
  let err = '';
  let browser: DashboardBrowser;
  let exited: Promise<number | null>;
  let clickhouseUrl: string | undefined;
  // Its own tables: line ids derive from offsets, which restart on the reset broker.
  const database = `live_demo_${Date.now()}`;
  const infected = new Set(
    generateTraffic({ ...DEMO, durationSeconds: DEMO.duration, startMs: 0 })
      .truth.filter((h) => h.role === 'dga' || h.role === 'tunnel')
      .map((h) => h.ip),
  );
  const alerted = () => [...out.matchAll(ALERT_LINE)].map((m) => ({ host: m[1]!, detector: m[3]! }));

  let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
  // A broker of its own: the shipped config's fixed group and changelog names then meet no other
  // file's, so this file runs beside others instead of in the serial pipeline lane.
  before(async () => {
    const clickhouse = await testClickHouse();
    kafka = await startPrivateKafka('live-demo');
    clickhouseUrl = clickhouse.url;
    const { path } = pipelineTestConfig({
      bootstrap: kafka.bootstrap,
      clickhousePort: Number(new URL(clickhouse.url).port),
      edit: demoTestEdit(database),
    });
    demo = spawn(
      process.execPath,
      [
        'bin/hamstring.js',
        'up',
        '--demo',
        '--config',
        path,
        ...Object.entries(DEMO).flatMap(([k, v]) => [`--${k}`, String(v)]),
      ],
      { env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    demo.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    demo.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    exited = new Promise((resolve) => demo!.once('exit', (code) => resolve(code)));
    let url: string | undefined;
    await waitFor(() => (url = /up: dashboard at (\S+)/.exec(out)?.[1]) !== undefined, {
      timeoutMs: 90_000,
      message: 'the demo prints its dashboard URL',
      observe: () => `${out}\n${err}`,
    });
    browser = await DashboardBrowser.launch(url!);
  });

  after(async () => {
    await browser?.close();
    if (demo && demo.exitCode === null && demo.signalCode === null) {
      demo.kill('SIGINT');
      demo.kill('SIGINT'); // the second one exits at once
      await exited;
    }
    if (clickhouseUrl) await dropDatabase(clickhouseUrl, database);
    await kafka?.stop();
  });

  async function expectNoErrors(open: { page: Page; errors: string[] }): Promise<void> {
    assert.deepEqual(open.errors, []);
    await open.page.close();
  }

  test('the pipeline page charts the live traffic through every stage to the first alerts', async () => {
    await waitFor(() => alerted().length > 0, {
      timeoutMs: 60_000,
      message: 'a first alert in the demo output',
      observe: () => `${out}\n${err}`,
    });
    const open = await browser.open('/');
    const { page } = open;
    for (const id of PIPELINE_CHARTS) assert.ok((await chartHasData(page, id)) > 0, id);
    // The line-to-alert latency needs the alert's lineage rows: every stage, then the alert.
    await page.waitForFunction(
      `[...document.querySelectorAll('#latency-table tr td:first-child')].some((td) => td.textContent === 'alert')`,
      undefined,
      { timeout: 45_000 },
    );
    const stages = await page.locator('#latency-table tr td:first-child').allTextContents();
    // batch_handler: when the collector put the line in a batch.
    assert.deepEqual(stages, ['collector', 'batch_handler', 'prefilter', 'inspector', 'detector', 'alert']);
    const workers = await page.locator('#workers-table tr td:first-child').allTextContents();
    for (const stage of ['logserver', 'collector', 'prefilter', 'inspector', 'detector', 'alerter'])
      assert.ok(
        workers.some((w) => w.includes(stage)),
        `worker row of ${stage} in ${JSON.stringify(workers)}`,
      );
    await screenshot(page, 'live-pipeline.png');
    await expectNoErrors(open);
  });

  test('a newly found alert appears on the alerts page, naming its detector', async () => {
    const open = await browser.open('/alerts');
    const { page } = open;
    const newest = `Math.max(0, ...[...document.querySelectorAll('#alerts-table tr')].map((r) => Number(r.dataset.time)))`;
    await page.waitForFunction(`${newest} > 0`, undefined, { timeout: 20_000 });
    assert.ok((await chartHasData(page, 'chart-scores')) > 0);
    const before = Number(await page.evaluate(newest));
    const rows = await page.locator('#alerts-table tr').count();
    await page.waitForFunction(`${newest} > ${before}`, undefined, { timeout: 45_000 });
    const row = page.locator('#alerts-table tr').first();
    assert.ok(Number(await row.getAttribute('data-time')) > before, 'the new alert is first');
    const host = (await row.getAttribute('data-host')) ?? '';
    assert.ok(infected.has(host), `${host} is one of the infected hosts ${[...infected].join(', ')}`);
    // The detector comes from another monitoring table, which may reach ClickHouse a little later.
    await page.waitForFunction(
      `document.querySelector('#alerts-table tr[data-time="${await row.getAttribute('data-time')}"]')?.textContent.match(/dga_detector|domainator/)`,
      undefined,
      { timeout: 20_000 },
    );
    assert.ok((await page.locator('#alerts-table tr').count()) > rows);
    await screenshot(page, 'live-alerts.png');
    await expectNoErrors(open);
  });

  test("the host page follows an alerted host's lines through every stage to the alert", async () => {
    const host = alerted()[0]!.host;
    const open = await browser.open(`/host?ip=${host}`);
    const { page } = open;
    assert.ok((await chartHasData(page, 'chart-host-latency')) > 0);
    await page.waitForFunction(
      `[...document.querySelectorAll('#lines-head th')].some((th) => th.textContent === 'alert')`,
      undefined,
      { timeout: 20_000 },
    );
    assert.ok((await page.locator('#lines-body tr').count()) > 0);
    assert.ok((await page.locator('#host-alerts tr').count()) > 0);
    await screenshot(page, 'live-host.png', false);
    await expectNoErrors(open);
  });

  test('Ctrl-C stops the demo cleanly: the agent drained (or its aborted tails settled), then a summary that agrees with the view', async () => {
    demo!.kill('SIGINT');
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 60_000).unref()),
    ]);
    assert.equal(code, 0, `${out}\n${err}`);
    assert.match(err, /up: SIGINT received, stopping cleanly/);
    assert.match(out, /up: monitoring agent drained/);
    assert.match(out, /up: stopped\s*$/);
    const seen = alerted();
    assert.ok(seen.length > 0);
    assert.ok(
      seen.every((a) => a.detector === 'dga_detector' || a.detector === 'domainator'),
      `every alert line names its detector (the DGA detector, or the Domainator for the tunnelling host): ${JSON.stringify(seen)}`,
    );
    const summary = out.slice(out.indexOf('HAMSTRING run summary'));
    assert.match(summary, /hosts falsely accused {3}0\n/);
    const found = Number(new RegExp(`infected hosts found {4}(\\d+) of ${infected.size}`).exec(summary)?.[1]);
    assert.equal(
      found,
      new Set(seen.map((a) => a.host)).size,
      `the hosts the view alerted (${[...new Set(seen.map((a) => a.host))].join(', ')}) are the hosts found:\n${summary}`,
    );
    for (const { host } of seen) assert.match(summary, new RegExp(`\\n {4}${host.replaceAll('.', '\\.')} `));
  });
});
