import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startHealthServer, type HealthTarget } from '../../../src/runtime/health-server.ts';
import type { WorkerStatus } from '../../../src/runtime/index.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';
import { DEPLOY } from './helpers.ts';

const TOKEN = 'probe-token-of-the-test-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'hamstring-probe-'));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, `${TOKEN}\n`);
const wrongTokenFile = join(dir, 'wrong');
writeFileSync(wrongTokenFile, 'not-the-token-of-this-server\n');

let ready = true;
const worker: HealthTarget = {
  metrics: new WorkerMetrics({ stage: 'log_storage.logserver', instance: 'probe-0' }),
  status: (): WorkerStatus => ({
    stage: 'log_storage.logserver',
    instanceId: 'probe-0',
    state: 'running',
    live: true,
    ready,
    epoch: 1,
    assigned: [],
    lastCommitAt: undefined,
    lastLoopAt: Date.now(),
    committedTransactions: 0,
    alerts: [],
  }),
};
// The real health server, with a token as the manifests configure it.
const server = await startHealthServer({ port: 0, accessToken: TOKEN, workers: () => [worker] });
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function probe(...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [`${DEPLOY}health-probe.js`, ...args], { env: {} }, (error, _out, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

describe('deploy/health-probe.js against the health server', () => {
  it('exits 0 for a live and ready worker when it sends the token from the file', async () => {
    assert.deepEqual(await probe(url('/livez'), tokenFile), { code: 0, stderr: '' });
    assert.deepEqual(await probe(url('/readyz'), tokenFile), { code: 0, stderr: '' });
  });

  it('exits 1 naming the answer when the worker is not ready', async () => {
    ready = false;
    try {
      const { code, stderr } = await probe(url('/readyz'), tokenFile);
      assert.equal(code, 1);
      assert.match(stderr, /HTTP 503 .*"ok":false/);
      assert.equal((await probe(url('/livez'), tokenFile)).code, 0, 'not ready is still live');
    } finally {
      ready = true;
    }
  });

  it('exits 1 without the token or with another one, and never prints the token', async () => {
    for (const args of [[url('/livez')], [url('/livez'), wrongTokenFile]]) {
      const { code, stderr } = await probe(...args);
      assert.equal(code, 1);
      assert.match(stderr, /HTTP 401/);
      assert.doesNotMatch(stderr, new RegExp(TOKEN));
    }
  });

  it('exits 1 when nothing listens, and 2 without a URL', async () => {
    const closed = await startHealthServer({ port: 0, workers: () => [] });
    const port = closed.port;
    await closed.close();
    assert.equal((await probe(`http://127.0.0.1:${port}/livez`)).code, 1);
    assert.equal((await probe()).code, 2);
  });
});
