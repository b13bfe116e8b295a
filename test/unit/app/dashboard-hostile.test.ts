import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import { scrapeSource } from '../../../src/app/dashboard/metrics-source.ts';
import { ConfigError } from '../../../src/config/errors.ts';
import { startHealthServer } from '../../../src/runtime/health-server.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { getRequest, rawRequest } from '../../helpers/raw-http.ts';

const TOKEN = 'dash-token-0123456789';
// Nothing listens there: the reader fails, which no request here needs.
const clickhouse = {
  url: 'http://127.0.0.1:9',
  database: 'default',
  connectTimeoutMs: 500,
  requestTimeoutMs: 500,
};

describe('dashboard under hostile requests', () => {
  let dashboard: Dashboard;
  before(async () => {
    dashboard = await startDashboard({
      port: 0,
      clickhouse,
      log: silentLogger(),
      limits: { headersTimeoutMs: 600, requestTimeoutMs: 1200, checkIntervalMs: 100 },
    });
  });
  after(async () => {
    await dashboard?.close();
  });

  it('serves its own static file but nothing outside the public folder, however the path is spelt', async () => {
    const ok = await rawRequest(dashboard.port, getRequest('/static/app.css'));
    assert.equal(ok.status, 200);
    for (const path of [
      '/static/../../../../../../etc/passwd',
      '/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/static/..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/static/%252e%252e/etc/passwd',
      '//etc/passwd',
      '/etc/passwd',
      '/static//etc/passwd',
      '/static/..\\..\\..\\etc\\passwd',
      '/vendor/../../package.json',
      '/static/server.ts',
    ]) {
      const answer = await rawRequest(dashboard.port, getRequest(path));
      assert.ok(answer.status === 404 || answer.status === 400, `${path}: ${answer.status}`);
      assert.equal(answer.text.includes('root:'), false, path);
      assert.equal(answer.text.includes('"dependencies"'), false, path);
    }
  });

  it('answers 414, 431 and 400 to oversized URLs, headers and filter values', async () => {
    assert.equal(
      (await rawRequest(dashboard.port, getRequest(`/api/alerts?host=${'1'.repeat(5000)}`))).status,
      414,
    );
    assert.equal(
      (await rawRequest(dashboard.port, getRequest('/', [`Cookie: ${'c'.repeat(20_000)}`]))).status,
      431,
    );
    const longValue = await rawRequest(dashboard.port, getRequest(`/api/alerts?host=${'1'.repeat(300)}`));
    assert.equal(longValue.status, 400);
  });

  it('disconnects a slow client within the header timeout and keeps serving others', async () => {
    const slow = await rawRequest(dashboard.port, getRequest('/api/config', ['X-Pad: ' + 'p'.repeat(200)]), {
      trickleMs: 100,
    });
    assert.ok(slow.closedAfterMs < 3_000, `closed after ${slow.closedAfterMs} ms`);
    const res = await fetch(new URL('/api/config', dashboard.url));
    assert.equal(res.status, 200);
  });
});

describe('dashboard access token', () => {
  it('refuses to bind a non-loopback address without a token', async () => {
    await assert.rejects(
      startDashboard({ port: 0, host: '0.0.0.0', clickhouse, log: silentLogger() }),
      (e: unknown) => e instanceof ConfigError && e.message.includes('dashboard.host'),
    );
  });

  it('with a token: 401 without it, pages and JSON with the Bearer header or the cookie', async () => {
    const dashboard = await startDashboard({
      port: 0,
      host: '0.0.0.0',
      accessToken: TOKEN,
      clickhouse,
      log: silentLogger(),
    });
    try {
      const base = `http://127.0.0.1:${dashboard.port}`;
      assert.equal((await fetch(`${base}/`)).status, 401);
      assert.equal((await fetch(`${base}/api/config`)).status, 401);
      assert.equal((await fetch(`${base}/static/app.css`)).status, 401);
      const page = await fetch(`${base}/`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(page.status, 200);
      assert.equal((await page.text()).includes(TOKEN), false);
      const login = await fetch(`${base}/alerts?access_token=${TOKEN}`, { redirect: 'manual' });
      assert.equal(login.status, 303);
      assert.equal(login.headers.get('location'), '/alerts');
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      assert.equal((await fetch(`${base}/api/config`, { headers: { cookie } })).status, 200);
    } finally {
      await dashboard.close();
    }
  });
});

describe('dashboard scraping token-guarded workers', () => {
  it("sends the token to the workers' /metrics, which refuse a scrape without it", async () => {
    const health = await startHealthServer({
      port: 0,
      host: '0.0.0.0',
      accessToken: TOKEN,
      workers: () => [],
    });
    try {
      const url = `http://127.0.0.1:${health.port}/metrics`;
      await assert.rejects(scrapeSource(url, 2000), /HTTP 401/);
      assert.ok(Array.isArray(await scrapeSource(url, 2000, TOKEN)));
    } finally {
      await health.close();
    }
  });
});
