/**
 * Screenshots of a running dashboard (e.g. during `npm start`) for docs/dashboard.md:
 *
 *   node --import tsx scripts/dashboard-screenshots.ts [--url http://127.0.0.1:8080/] [--out docs/images] [--host IP]
 *
 * Drives Debian's chromium (HAMSTRING_CHROMIUM overrides /usr/bin/chromium) with playwright-core,
 * waits until each page's charts have data, and writes dashboard-pipeline.png, dashboard-alerts.png
 * and dashboard-host.png (the host: --host, else the one with most alerts; its first screen only).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080/' },
    out: { type: 'string', default: 'docs/images' },
    host: { type: 'string' },
  },
});
const base = values.url;
mkdirSync(values.out, { recursive: true });

const hosts = (await (await fetch(new URL('/api/hosts?limit=1', base))).json()) as { host: string }[];
const host = values.host ?? hosts[0]?.host;
const pages: [string, string, string][] = [
  ['/', 'dashboard-pipeline.png', 'chart-stage-lines'],
  ['/alerts', 'dashboard-alerts.png', 'chart-scores'],
  ...(host
    ? [
        [`/host?ip=${encodeURIComponent(host)}`, 'dashboard-host.png', 'chart-host-latency'] as [
          string,
          string,
          string,
        ],
      ]
    : []),
];

const browser = await chromium.launch({
  executablePath: process.env.HAMSTRING_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  for (const [path, file, chartId] of pages) {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(new URL(path, base).href);
    await page.waitForFunction(
      `Number(document.getElementById('${chartId}')?.dataset.points ?? 0) > 0`,
      undefined,
      {
        timeout: 60_000,
      },
    );
    // The host page lists a hundred lines: its first screen is the picture.
    await page.screenshot({ path: join(values.out, file), fullPage: !path.startsWith('/host') });
    console.log(`wrote ${join(values.out, file)}`);
    await page.close();
  }
} finally {
  await browser.close();
}
