import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dashboardOptionsFromConfig, startDashboard } from '../../../src/app/dashboard/index.ts';
import { sensorRegistry, serveMetrics } from '../../../src/app/sensors/sensor-metrics.ts';
import { validateConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { DEFAULT_HTTP_LIMITS, httpLimitsFromConfig } from '../../../src/runtime/http-guard.ts';
import type { TransactionalWorker } from '../../../src/runtime/index.ts';
import { hostWorkers } from '../../../src/runtime/worker-host.ts';
import { freePort } from '../../helpers/free-port.ts';
import { getRequest, rawRequest } from '../../helpers/raw-http.ts';
import { configErrorOf, minimalConfig, withValue } from '../../unit/config/helpers.ts';

/**
 * `endpoints.limits` in config.yaml reaches every HTTP server of the project: the workers' health
 * server (through hostWorkers, as `hamstring run` starts it), the dashboard (through
 * dashboardOptionsFromConfig, as `hamstring up` and `hamstring dashboard` build it) and a sensor's
 * metrics endpoint. The limits here are far below the defaults, so each answer below shows the
 * configured value at work, not the default. An integration file, not a unit one: its slow-client
 * bounds need an event loop of its own (beside the unit shard's other files, a cut-off took 9.8 s).
 */

const configWith = (limits: unknown): HamstringConfig =>
  validateConfig(withValue(minimalConfig(), ['endpoints', 'limits'], limits), { env: {} });

const TIGHT = {
  max_url_bytes: 512,
  max_body_bytes: 64,
  headers_timeout_seconds: 0.5,
  request_timeout_seconds: 1,
};

describe('endpoints.limits', () => {
  it('defaults to the built-in limits; every error names its key and what is expected', () => {
    assert.deepEqual(
      httpLimitsFromConfig(validateConfig(minimalConfig(), { env: {} }).endpoints),
      DEFAULT_HTTP_LIMITS,
    );
    assert.match(
      configErrorOf(() => configWith({ max_url_bytes: 10 })).message,
      /endpoints\.limits\.max_url_bytes: expected integer between 256 and 1048576, got 10/,
    );
    assert.match(
      configErrorOf(() => configWith({ headers_timeout_seconds: 20, request_timeout_seconds: 5 })).message,
      /endpoints\.limits\.request_timeout_seconds: expected request_timeout_seconds >= headers_timeout_seconds/,
    );
    assert.match(
      configErrorOf(() => configWith({ max_query_bytes: 10 })).message,
      /endpoints\.limits\.max_query_bytes: unknown key \(did you mean "max_url_bytes"\?\)/,
    );
  });

  /** The same hostile requests against one server whose limits came from `TIGHT`. */
  async function checkServer(port: number, path: string): Promise<void> {
    const okLength = await rawRequest(port, getRequest(`${path}?pad=${'a'.repeat(400)}`));
    assert.notEqual(okLength.status, 414, 'a URL under the configured maximum');
    const long = await rawRequest(port, getRequest(`${path}?pad=${'a'.repeat(600)}`));
    assert.equal(long.status, 414, 'a URL over the configured 512 bytes (under the 4 KiB default)');
    const body = await rawRequest(
      port,
      [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Length: 100', '', 'x'.repeat(100)].join('\r\n'),
    );
    assert.equal(body.status, 413, 'a body over the configured 64 bytes');
    const chunked = await rawRequest(
      port,
      [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Transfer-Encoding: chunked',
        '',
        '100',
        'y'.repeat(256),
        '',
      ].join('\r\n'),
      { timeoutMs: 3000 },
    );
    assert.ok(chunked.closedAfterMs < 3000, 'a chunked body past the limit: the socket is closed');
    const slow = await rawRequest(port, getRequest(path, ['X-Pad: ' + 'p'.repeat(200)]), { trickleMs: 50 });
    assert.ok(
      slow.closedAfterMs < 3_000,
      `slow client cut off after ${slow.closedAfterMs} ms (configured 0.5 s headers, 1 s request; default 10 s)`,
    );
  }

  it("reaches the workers' health server", async () => {
    const config = configWith(TIGHT);
    // A worker that runs until stopped: the host serves its health endpoints while any worker runs.
    let stopped = () => undefined as void;
    const running = new Promise<void>((resolve) => (stopped = resolve));
    const worker = {
      start: () => Promise.resolve(),
      stop: () => Promise.resolve(stopped()),
      done: () => running,
      status: () => ({ state: 'stopped' }),
    } as unknown as TransactionalWorker;
    const host = await hostWorkers({
      workers: [worker],
      log: silentLogger(),
      healthPort: await freePort(),
      httpLimits: httpLimitsFromConfig(config.endpoints),
      signals: [],
    });
    try {
      assert.ok(host.healthPort !== undefined);
      // Not a probe path: 404 without asking the stub worker, where the limits have let it through.
      await checkServer(host.healthPort, '/notfound');
    } finally {
      await host.stop();
    }
  });

  it('reaches the dashboard', async () => {
    const config = configWith(TIGHT);
    const dashboard = await startDashboard({
      ...dashboardOptionsFromConfig(config, { log: silentLogger() }),
      port: 0,
    });
    try {
      await checkServer(dashboard.port, '/api/config');
    } finally {
      await dashboard.close();
    }
  });

  it("reaches a sensor's metrics endpoint", async () => {
    const config = configWith(TIGHT);
    const metrics = await serveMetrics(
      sensorRegistry(() => []),
      0,
      httpLimitsFromConfig(config.endpoints),
    );
    try {
      await checkServer(metrics.port, '/metrics');
    } finally {
      await metrics.close();
    }
  });
});
