import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import {
  startHealthServer,
  type HealthServer,
  type HealthTarget,
} from '../../../src/runtime/health-server.ts';
import type { WorkerStatus } from '../../../src/runtime/index.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';

function fakeWorker(stage: string, instance: string, over: Partial<WorkerStatus> = {}) {
  const metrics = new WorkerMetrics({ stage, instance });
  let status: WorkerStatus = {
    stage,
    instanceId: instance,
    state: 'running',
    live: true,
    ready: true,
    epoch: 3,
    assigned: [`${stage}-in:0`],
    lastCommitAt: Date.UTC(2025, 0, 1),
    lastLoopAt: Date.UTC(2025, 0, 1),
    committedTransactions: 7,
    alerts: [],
    ...over,
  };
  let statusCalls = 0;
  const worker: HealthTarget & { set(s: Partial<WorkerStatus>): void; statusCalls(): number } = {
    metrics,
    status: () => {
      statusCalls += 1;
      metrics.up.set(status.ready ? 1 : 0);
      return status;
    },
    set: (s) => {
      status = { ...status, ...s };
    },
    statusCalls: () => statusCalls,
  };
  return worker;
}

interface Body {
  ok: boolean;
  workers: (Record<string, unknown> & { stage: string })[];
}

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(workers: () => readonly HealthTarget[]): Promise<string> {
  server = await startHealthServer({ port: 0, workers });
  return `http://127.0.0.1:${server.port}`;
}

describe('health server', () => {
  it('answers /livez 200 while every worker is live and 503 once one is not', async () => {
    const a = fakeWorker('collector', '0');
    const b = fakeWorker('detector', '0');
    const base = await serve(() => [a, b]);
    const ok = await fetch(`${base}/livez`);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await ok.json()) as Body;
    assert.equal(body.ok, true);
    assert.deepEqual(
      body.workers.map((w) => w.stage),
      ['collector', 'detector'],
    );

    b.set({ state: 'failed', live: false, ready: false, failure: 'producer fenced 4 times in a row' });
    const down = await fetch(`${base}/livez`);
    assert.equal(down.status, 503);
    const detail = ((await down.json()) as Body).workers[1]!;
    assert.equal(detail.state, 'failed');
    assert.equal(detail.failure, 'producer fenced 4 times in a row');
  });

  it('answers /readyz 200 only when every worker is ready, with each worker status in the body', async () => {
    const a = fakeWorker('collector', '0');
    const b = fakeWorker('detector', '1', { ready: false, state: 'recovering', assigned: [] });
    const base = await serve(() => [a, b]);
    const res = await fetch(`${base}/readyz`);
    assert.equal(res.status, 503);
    const body = (await res.json()) as Body;
    assert.equal(body.ok, false);
    assert.deepEqual(body.workers[0], {
      stage: 'collector',
      instanceId: '0',
      state: 'running',
      live: true,
      ready: true,
      epoch: 3,
      assigned: ['collector-in:0'],
      lastCommitAt: '2025-01-01T00:00:00.000Z',
      alerts: [],
    });
    assert.equal(body.workers[1]!.state, 'recovering');
    assert.equal(body.workers[1]!.lastCommitAt, '2025-01-01T00:00:00.000Z');

    b.set({ ready: true, state: 'running', alerts: ['no_commit_while_input_arrives'] });
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as Body).workers[1]!.alerts, ['no_commit_while_input_arrives']);
  });

  it('is not ready without workers, but live', async () => {
    const base = await serve(() => []);
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    assert.equal((await fetch(`${base}/livez`)).status, 200);
  });

  it('reports a worker that never committed with lastCommitAt null', async () => {
    const a = fakeWorker('collector', '0', { lastCommitAt: undefined });
    const base = await serve(() => [a]);
    const body = (await (await fetch(`${base}/readyz`)).json()) as Body;
    assert.equal(body.workers[0]!.lastCommitAt, null);
  });

  it('serves every worker registry in one valid Prometheus exposition', async () => {
    const a = fakeWorker('collector', '0');
    const b = fakeWorker('detector', '0', { ready: false });
    a.metrics.commits.inc(5);
    b.metrics.commits.inc(2);
    a.metrics.transactionSeconds.observe(0.02);
    const base = await serve(() => [a, b]);
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), a.metrics.registry.contentType);
    const text = await res.text();
    assert.match(text, /hamstring_worker_transactions_committed_total\{stage="collector",instance="0"\} 5/);
    assert.match(text, /hamstring_worker_transactions_committed_total\{stage="detector",instance="0"\} 2/);
    assert.match(
      text,
      /hamstring_worker_transaction_seconds_bucket\{le="0\.025",stage="collector",instance="0"\} 1/,
    );
    // One HELP and one TYPE line per metric family, however many workers.
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    assert.equal(new Set(types).size, types.length);
    assert.equal(types.filter((l) => l.includes('transactions_committed_total')).length, 1);
    // Scraping asks each worker for its status, so the ready gauge is current.
    assert.equal(a.statusCalls(), 1);
    assert.match(text, /hamstring_worker_ready\{stage="detector",instance="0"\} 0/);
    assert.match(text, /hamstring_worker_ready\{stage="collector",instance="0"\} 1/);
  });

  it("adds the process's own series after the workers', each family once, unless told not to", async () => {
    const a = fakeWorker('collector', '0');
    const b = fakeWorker('detector', '0');
    const base = await serve(() => [a, b]);
    const text = await (await fetch(`${base}/metrics`)).text();
    const rss = /^process_resident_memory_bytes (\d+)$/m.exec(text);
    assert.ok(rss && Number(rss[1]) > 0, 'resident memory');
    assert.match(text, /^process_start_time_seconds \d+$/m, 'a series the aggregation of workers would drop');
    assert.match(
      text,
      /^nodejs_heap_space_size_used_bytes\{space="new"\} \d+$/m,
      'the young generation apart',
    );
    assert.match(text, /^nodejs_external_memory_bytes \d+$/m);
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds [\d.e-]+$/m);
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    assert.equal(new Set(types).size, types.length, 'one TYPE line per family');
    assert.ok(!/stage="/.test(text.slice(text.indexOf('# HELP process_'))), 'process series carry no stage');
    await server?.close();
    server = await startHealthServer({ port: 0, workers: () => [a], processMetrics: false });
    const without = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    assert.match(without, /hamstring_worker_ready/);
    assert.doesNotMatch(without, /^(process|nodejs)_/m);
  });

  it('asks for the workers on every request, so replaced workers are seen', async () => {
    let current = [fakeWorker('collector', '0', { ready: false })];
    const base = await serve(() => current);
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    current = [fakeWorker('collector', '1')];
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  });

  it('answers unknown paths with 404, other methods with 405, HEAD without a body', async () => {
    const base = await serve(() => [fakeWorker('collector', '0')]);
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    const post = await fetch(`${base}/livez`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await fetch(`${base}/readyz?verbose=1`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  it('answers 500 when a worker status cannot be read', async () => {
    const base = await serve(() => [
      {
        metrics: new WorkerMetrics({ stage: 's', instance: '0' }),
        status: () => {
          throw new Error('boom');
        },
      },
    ]);
    const res = await fetch(`${base}/livez`);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /boom/);
  });

  it('closes promptly despite kept-alive connections and releases its port', async () => {
    const base = await serve(() => [fakeWorker('collector', '0')]);
    assert.equal((await fetch(`${base}/livez`)).status, 200);
    const port = server!.port;
    const t0 = Date.now();
    await server!.close();
    server = undefined;
    assert.ok(Date.now() - t0 < 1_000);
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    assert.ok(refused, 'port still accepts connections after close');
  });

  it('rejects when the port is taken', async () => {
    const base = await serve(() => []);
    const port = Number(new URL(base).port);
    await assert.rejects(startHealthServer({ port, workers: () => [] }), { code: 'EADDRINUSE' });
  });
});
