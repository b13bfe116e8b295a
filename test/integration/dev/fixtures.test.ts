import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { createClient } from '@clickhouse/client';
import { projectRoot } from '../../../src/dev/paths.ts';
import { probeKafkaReachable, probeKafkaReady } from '../../../src/kafka/readiness.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';

const execFileAsync = promisify(execFile);
const hamstring = join(projectRoot, 'bin', 'hamstring.js');

describe('test fixtures and the hamstring CLI', () => {
  test('testKafka() hands out a ready cluster: transactions and group joins work', async () => {
    const { bootstrap, cluster } = await testKafka();
    assert.equal(bootstrap, cluster.bootstrapServers);
    assert.ok(cluster.nodeIds().every((id) => cluster.isNodeRunning(id)));
    assert.equal(await probeKafkaReachable(bootstrap, 10_000), true);
    await probeKafkaReady(bootstrap, 30_000);
    await probeKafkaReady(bootstrap, 30_000, { groupProtocol: 'classic' });
  });

  test('testKafka() is shared within a test file', async () => {
    assert.equal((await testKafka()).cluster, (await testKafka()).cluster);
  });

  test('a closed port is reported unreachable, not thrown', async () => {
    assert.equal(await probeKafkaReachable('127.0.0.1:1', 2000), false);
  });

  test('probeKafkaReady names what was not ready at the deadline', async () => {
    await assert.rejects(
      probeKafkaReady('127.0.0.1:1', 1500),
      /Kafka at 127\.0\.0\.1:1 not ready after 1500 ms .*metadata not ready/,
    );
  });

  test('testClickHouse() hands out a server that answers queries', async () => {
    const { url } = await testClickHouse();
    const client = createClient({ url });
    try {
      const rows = await (
        await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })
      ).json<{ one: number }>();
      assert.deepEqual(rows, [{ one: 1 }]);
    } finally {
      await client.close();
    }
  });

  test('`hamstring dev kafka status` and `dev clickhouse status` describe the running services', async () => {
    const { cluster } = await testKafka();
    const { server } = await testClickHouse();
    const kafka = await execFileAsync(process.execPath, [
      hamstring,
      'dev',
      'kafka',
      'status',
      '--data-dir',
      cluster.dataDir,
    ]);
    assert.match(kafka.stdout, new RegExp(`bootstrap ${cluster.bootstrapServers.replace(/\./g, '\\.')}`));
    assert.match(kafka.stdout, /node 1 {2}running/);
    const clickhouse = await execFileAsync(process.execPath, [
      hamstring,
      'dev',
      'clickhouse',
      'status',
      '--data-dir',
      server.dataDir,
    ]);
    assert.match(clickhouse.stdout, new RegExp(server.url.replace(/\./g, '\\.')));
  });

  test('`hamstring dev kafka status` exits 3 for a data dir without a cluster', async () => {
    await assert.rejects(
      execFileAsync(process.execPath, [
        hamstring,
        'dev',
        'kafka',
        'status',
        '--data-dir',
        join(projectRoot, 'var', 'nothing-here'),
      ]),
      (error: { code?: number; stdout?: string }) =>
        error.code === 3 && /not running/.test(error.stdout ?? ''),
    );
  });
});
