import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { ConfigError } from '../../../src/config/errors.ts';
import { startHealthServer, type HealthServer } from '../../../src/runtime/health-server.ts';
import { tokenMatches } from '../../../src/runtime/http-guard.ts';
import { getRequest, rawRequest } from '../../helpers/raw-http.ts';

const TOKEN = 'tok-0123456789abcdef';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('endpoint access', () => {
  it('binds 127.0.0.1 by default and refuses another address without a token, naming the key', async () => {
    server = await startHealthServer({ port: 0, workers: () => [] });
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/livez`)).status, 200);
    await assert.rejects(
      startHealthServer({ port: 0, host: '0.0.0.0', workers: () => [] }),
      (e: unknown) =>
        e instanceof ConfigError && /runtime\.health_host: expected a loopback address/.test(e.message),
    );
    await assert.rejects(
      startHealthServer({ port: 0, host: '0.0.0.0', hostKey: '--health-host', workers: () => [] }),
      /--health-host/,
    );
  });

  it('answers 401 without the token, 200 with the Bearer header, and sets an HttpOnly cookie from ?access_token', async () => {
    server = await startHealthServer({ port: 0, host: '0.0.0.0', accessToken: TOKEN, workers: () => [] });
    const base = `http://127.0.0.1:${server.port}`;
    const none = await fetch(`${base}/metrics`);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="hamstring"');
    assert.equal(
      (await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token-000000' } })).status,
      401,
    );
    assert.equal(
      (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
      200,
    );
    const viaQuery = await fetch(`${base}/readyz?x=1&access_token=${TOKEN}`, { redirect: 'manual' });
    assert.equal(viaQuery.status, 303);
    assert.equal(viaQuery.headers.get('location'), '/readyz?x=1');
    const cookie = viaQuery.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const withCookie = await fetch(`${base}/livez`, { headers: { cookie: cookie.split(';')[0] ?? '' } });
    assert.equal(withCookie.status, 200);
    assert.equal((await fetch(`${base}/livez?access_token=wrong`)).status, 401);
  });

  it('compares tokens whatever their lengths', () => {
    assert.equal(tokenMatches(TOKEN, TOKEN), true);
    assert.equal(tokenMatches(TOKEN, `${TOKEN}x`), false);
    assert.equal(tokenMatches(TOKEN, ''), false);
    assert.equal(tokenMatches(TOKEN, undefined), false);
  });
});

describe('hostile requests to the health server', () => {
  it('answers 414 to a long URL and 431 to oversized headers, and keeps serving', async () => {
    server = await startHealthServer({ port: 0, workers: () => [] });
    const long = await rawRequest(server.port, getRequest(`/livez?q=${'a'.repeat(5000)}`));
    assert.equal(long.status, 414);
    const huge = await rawRequest(server.port, getRequest('/livez', [`X-Big: ${'b'.repeat(20_000)}`]));
    assert.equal(huge.status, 431);
    const hugeUrl = await rawRequest(server.port, getRequest(`/livez?q=${'c'.repeat(20_000)}`));
    assert.equal(hugeUrl.status, 431);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/livez`)).status, 200);
  });

  it('disconnects a client that sends its headers too slowly (slowloris)', async () => {
    server = await startHealthServer({
      port: 0,
      workers: () => [],
      limits: { headersTimeoutMs: 600, requestTimeoutMs: 1200, checkIntervalMs: 100 },
    });
    // One byte every 100 ms: the request line alone would take ~2.5 s, the headers forever.
    const slow = await rawRequest(server.port, getRequest('/livez', ['X-Pad: ' + 'p'.repeat(200)]), {
      trickleMs: 100,
      timeoutMs: 10_000,
    });
    assert.ok(slow.closedAfterMs < 3_000, `closed after ${slow.closedAfterMs} ms`);
    assert.ok(slow.status === 408 || slow.status === 0, `status ${slow.status}`);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/livez`)).status, 200);
  });
});
