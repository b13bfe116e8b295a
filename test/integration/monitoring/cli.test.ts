import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { TABLES } from '../../../src/monitoring/tables.ts';
import { monitoringTopics } from '../../../src/monitoring/topics.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { counts, monitoringWorldOf, produce, rows } from './support.ts';

const BIN = fileURLToPath(new URL('../../../bin/hamstring.js', import.meta.url));

let bootstrap: string;
let chUrl: string;
before(async () => {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = k.bootstrap;
  chUrl = ch.url;
});

describe('hamstring monitoring run', () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('creates the topics, prints a ready line, delivers rows, stops gracefully on SIGTERM', async () => {
    const prefix = `${uniqueTopic('moncli')}-clickhouse_`;
    const database = `mon_${prefix.replace(/-/g, '_')}`.replace(/_+$/, '');
    const group = uniqueGroup('moncli');
    const url = new URL(chUrl);
    const dir = mkdtempSync(join(tmpdir(), 'hamstring-moncli-'));
    dirs.push(dir);
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      [
        'environment:',
        `  kafka_bootstrap_servers: "${bootstrap}"`,
        '  kafka_consumer:',
        '    session_timeout_ms: 6000',
        '    heartbeat_interval_ms: 1000',
        '  monitoring:',
        '    clickhouse_server:',
        `      hostname: "${url.hostname}"`,
        `      port: ${url.port}`,
        'pipeline:',
        '  monitoring:',
        '    kafka_batch:',
        '      size: 500',
        '      timeout_ms: 200',
        '',
      ].join('\n'),
    );
    const env = { ...process.env };
    delete env.HAMSTRING_CONFIG;
    delete env.KAFKA_BOOTSTRAP_SERVERS;
    const child = spawn(
      process.execPath,
      [
        BIN,
        'monitoring',
        'run',
        '--config',
        configPath,
        '--database',
        database,
        '--topic-prefix',
        prefix,
        '--group',
        group,
        '--partitions',
        '2',
      ],
      { env: { ...env, HAMSTRING_INSTANCE_ID: 'cli-test' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    await waitFor(() => out.includes('monitoring agent ready'), {
      timeoutMs: 60_000,
      message: 'the ready line',
      observe: () => ({ out, err: err.slice(-2_000), exit: child.exitCode }),
    });
    assert.match(out, /instance cli-test/);

    const admin = createAdmin(bootstrap);
    try {
      const existing = new Set(await admin.listTopics());
      for (const t of monitoringTopics({ topicPrefix: prefix }))
        assert.ok(existing.has(t), `topic ${t} created`);
      assert.equal(monitoringTopics({ topicPrefix: prefix }).length, TABLES.length + 1);
      assert.equal((await admin.watermarks(`${prefix}alerts`)).length, 2);
    } finally {
      admin.close();
    }

    const world = monitoringWorldOf(prefix, database, group, ['alerts']);
    await produce(bootstrap, rows(world, 'alerts', 0, 40));
    await waitFor(async () => (await counts(chUrl, database, 'alerts')).dedup === 40, {
      timeoutMs: 60_000,
      message: '40 rows through the CLI agent',
      observe: () => err.slice(-1_000),
    });

    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    assert.equal(code, 0, `exit code; stderr: ${err.slice(-2_000)}`);
    assert.match(err, /SIGTERM received, stopping/);
    assert.match(out, /monitoring agent stopped/);
    assert.ok(Date.now() - t0 < 20_000, 'stops promptly');
  });
});
