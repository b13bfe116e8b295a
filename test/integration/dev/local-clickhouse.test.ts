import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@clickhouse/client';
import { LocalClickHouse } from '../../../src/dev/clickhouse-server.ts';
import { projectRoot } from '../../../src/dev/paths.ts';

/** Its own ports and data dir: it runs next to the run-wide server (18123/19000). */
const DATA_DIR = join(projectRoot, 'var', 'test', 'clickhouse-manager');
const HTTP_PORT = 28123;
const TCP_PORT = 29000;

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = createClient({ url });
  try {
    return await (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  } finally {
    await client.close();
  }
}

describe('local ClickHouse server', () => {
  let server: LocalClickHouse | undefined;

  before(async () => {
    await LocalClickHouse.attach(DATA_DIR)?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  after(async () => {
    await server?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  test('starts, answers queries, and keeps its data across kill -9 and restart', async () => {
    const began = Date.now();
    server = await LocalClickHouse.start({ dataDir: DATA_DIR, httpPort: HTTP_PORT, tcpPort: TCP_PORT });
    process.stderr.write(`# ClickHouse started and ready in ${Date.now() - began} ms\n`);
    assert.equal(server.wasAlreadyRunning, false);
    assert.equal(server.url, `http://127.0.0.1:${HTTP_PORT}`);

    const client = createClient({ url: server.url });
    try {
      await client.command({
        query: 'CREATE TABLE events (id UInt32, name String) ENGINE = MergeTree ORDER BY id',
      });
      await client.insert({
        table: 'events',
        values: Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `event-${i}` })),
        format: 'JSONEachRow',
      });
    } finally {
      await client.close();
    }

    const attached = LocalClickHouse.attach(DATA_DIR);
    assert.equal(attached?.url, server.url, 'another handle attaches through the state file');
    assert.equal((await LocalClickHouse.start({ dataDir: DATA_DIR })).wasAlreadyRunning, true);

    await server.kill();
    assert.equal(server.isRunning(), false);
    assert.equal(LocalClickHouse.attach(DATA_DIR), undefined);
    await assert.rejects(fetch(`${server.url}/ping`), 'nothing answers after kill -9');

    await server.restart();
    const [after] = await query<{ n: number; total: number }>(
      server.url,
      'SELECT toUInt32(count()) AS n, toUInt32(sum(id)) AS total FROM events',
    );
    assert.deepEqual(after, { n: 1000, total: (999 * 1000) / 2 });

    await server.stop();
    assert.equal(
      existsSync(join(DATA_DIR, 'clickhouse-state.json')),
      false,
      'a clean stop removes the state file',
    );
    server = await LocalClickHouse.start({ dataDir: DATA_DIR });
    assert.equal(server.httpPort, HTTP_PORT, 'a restart without ports reuses the ones the data dir had');
    const [again] = await query<{ n: number }>(server.url, 'SELECT toUInt32(count()) AS n FROM events');
    assert.equal(again?.n, 1000);
  });
});
