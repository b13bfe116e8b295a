import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (scripts/setup.sh installs it); playwright never downloads a browser here. */
export const CHROMIUM = process.env.HAMSTRING_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = new URL('../../../var/screenshots/', import.meta.url);

/** The `skip` option of a browser test: a reason when chromium is missing. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `chromium not installed at ${CHROMIUM} (apt-get install chromium, or run scripts/setup.sh)`;

/** A page and the script errors it logged (a test fails on them at its end). */
export interface OpenPage {
  page: Page;
  errors: string[];
}

/** A headless chromium opening dashboard pages at 1440x900. */
export class DashboardBrowser {
  private constructor(
    private readonly browser: Browser,
    private readonly baseUrl: string,
  ) {}

  static async launch(baseUrl: string): Promise<DashboardBrowser> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    return new DashboardBrowser(browser, baseUrl);
  }

  async open(path: string): Promise<OpenPage> {
    const page = await this.browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(new URL(path, this.baseUrl).href);
    return { page, errors };
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}

/** The pipeline page's charts, each of which must show data once lines flowed. */
export const PIPELINE_CHARTS = [
  'chart-volume',
  'chart-stage-lines',
  'chart-latency',
  'chart-fill',
  'chart-records',
  'chart-lag',
  'chart-txn',
];

/** Page-side expression: the non-empty points the chart panel counted (the pages set data-points). */
export const points = (id: string) =>
  `Number(document.getElementById(${JSON.stringify(id)})?.dataset.points ?? 0)`;

/** Waits until the chart panel drew a canvas with a size and non-empty points; returns their count. */
export async function chartHasData(page: Page, id: string, timeoutMs = 20_000): Promise<number> {
  await page.waitForFunction(`${points(id)} > 0`, undefined, { timeout: timeoutMs }).catch((e: unknown) => {
    throw new Error(`${id}: no points within ${timeoutMs} ms (${(e as Error).message})`);
  });
  const canvas = page.locator(`#${id} canvas`);
  assert.equal(await canvas.count(), 1, `${id} draws one canvas`);
  const box = await canvas.boundingBox();
  assert.ok(box && box.width > 200 && box.height > 100, `${id} canvas has a size: ${JSON.stringify(box)}`);
  return Number(await page.locator(`#${id}`).getAttribute('data-points'));
}

/** Saves the whole page, or only what the 1440x900 window shows (a long page, for a picture). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: new URL(name, SCREENSHOTS).pathname, fullPage });
}
