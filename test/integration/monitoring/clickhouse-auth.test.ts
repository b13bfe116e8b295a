import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { validateConfig } from '../../../src/config/load.ts';
import type { HamstringConfig } from '../../../src/config/schema.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { clearSecrets } from '../../../src/errors/secrets.ts';
import {
  ClickHouseConnection,
  ClickHouseUnavailable,
  type ClickHouseTarget,
} from '../../../src/monitoring/clickhouse-connection.ts';
import { clickhouseTargetFromConfig } from '../../../src/monitoring/clickhouse-target.ts';
import { secretSafeOptions } from '../../../src/observability/logger.ts';
import type { TestClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { captureLog } from '../../helpers/capture-log.ts';
import { passwordUsersXml, selfSignedCertificate } from '../../helpers/tls-files.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { ownClickHousePort, startOwnClickHouse } from '../../helpers/own-clickhouse.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createDataset } from '../dashboard/monitoring-rows.ts';
import { command, counts, monitoringWorld, produce, query, rows, startAgent } from './support.ts';

// HTTP, TCP, HTTPS at +100..+102 and interserver at +110: clear of agent-recovery's +70..+80, which
// it shared a port with when both ran at once.
const OFFSET = 100;
const USER = 'hamstring_agent';
const PASSWORD = 'Ch-pass-7f3a9e1c';

let dir: string;
let ch: TestClickHouse;
let httpsUrl: string;
let ca: Buffer;
let bootstrap: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hamstring-ch-auth-'));
  selfSignedCertificate(dir);
  ca = readFileSync(join(dir, 'server.crt'));
  writeFileSync(join(dir, 'users.xml'), passwordUsersXml(USER, PASSWORD));
  writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
  const httpsPort = ownClickHousePort(OFFSET) + 2;
  const [c, k] = await Promise.all([
    startOwnClickHouse('auth', OFFSET, {
      usersConfig: join(dir, 'users.xml'),
      https: {
        port: httpsPort,
        certificateFile: join(dir, 'server.crt'),
        privateKeyFile: join(dir, 'server.key'),
      },
    }),
    testKafka(),
  ]);
  ch = c;
  bootstrap = k.bootstrap;
  httpsUrl = `https://127.0.0.1:${httpsPort}`;
});
after(async () => {
  clearSecrets();
  await ch?.server.stop();
});

function config(server: Record<string, unknown>): HamstringConfig {
  return validateConfig(
    {
      environment: {
        kafka_bootstrap_servers: bootstrap,
        monitoring: {
          clickhouse_server: { hostname: '127.0.0.1', port: ownClickHousePort(OFFSET) + 2, ...server },
        },
      },
      pipeline: {
        monitoring: {
          clickhouse_connector: {
            batch_size: 50,
            batch_timeout: 1,
            connect_timeout_seconds: 3,
            operation_timeout_seconds: 5,
          },
          kafka_batch: { size: 100, timeout_ms: 200 },
        },
      },
    },
    { env: {} },
  );
}

async function openFails(target: ClickHouseTarget): Promise<ClickHouseUnavailable> {
  try {
    const conn = await ClickHouseConnection.open(target);
    await conn.close();
  } catch (e) {
    assert.ok(e instanceof ClickHouseUnavailable, String(e));
    return e;
  }
  assert.fail('connection opened');
}

describe('ClickHouse with a password user over HTTPS (Debian 18.16)', () => {
  test('the configured user, password file and CA connect over HTTPS', async () => {
    const cfg = config({
      user: USER,
      password_file: join(dir, 'password'),
      tls: { enabled: true, ca_file: join(dir, 'server.crt') },
    });
    const target = clickhouseTargetFromConfig(cfg, { env: {} });
    assert.equal(target.url, httpsUrl);
    const conn = await ClickHouseConnection.open(target);
    try {
      assert.match(conn.version.text, /^\d+\.\d+/);
      const rows = await conn.query<{ u: string }>('SELECT {v:String} AS u', { v: "it's" });
      assert.deepEqual(rows, [{ u: "it's" }]);
    } finally {
      await conn.close();
    }
  });

  test('a wrong password is an authentication failure, and the message does not hold the password', async () => {
    const target = clickhouseTargetFromConfig(config({ user: USER, tls: { enabled: true } }), {
      env: { CLICKHOUSE_PASSWORD: 'Wrong-pass-0000', CLICKHOUSE_CA_FILE: join(dir, 'server.crt') },
    });
    const e = await openFails(target);
    assert.equal(e.kind, 'authentication');
    assert.match(e.message, /authentication failed/);
    assert.equal(e.message.includes('Wrong-pass-0000'), false);
    const none = await openFails({ ...target, password: '' });
    assert.equal(none.kind, 'authentication');
  });

  test('a server certificate from an untrusted CA is a TLS failure', async () => {
    const target = clickhouseTargetFromConfig(config({ user: USER, tls: { enabled: true } }), {
      env: { CLICKHOUSE_PASSWORD: PASSWORD },
    });
    const e = await openFails(target);
    assert.equal(e.kind, 'tls');
    assert.match(e.message, /certificate not trusted/);
  });

  test('a closed port is unreachable', async () => {
    const e = await openFails({
      url: 'http://127.0.0.1:1',
      database: 'default',
      connectTimeoutMs: 3000,
      requestTimeoutMs: 3000,
    });
    assert.equal(e.kind, 'unreachable');
  });

  test('the agent stops at start on a wrong password, naming the cause, instead of retrying forever', async () => {
    const { log, lines } = captureLog({ ...secretSafeOptions() });
    const world = await monitoringWorld(bootstrap, ['batch_timestamps']);
    const cfg = config({ user: USER, tls: { enabled: true, ca_file: join(dir, 'server.crt') } });
    const started = Date.now();
    await assert.rejects(
      startAgent(cfg, bootstrap, world, { log, clickhousePassword: 'Wrong-pass-1111' }),
      (e: unknown) => e instanceof ClickHouseUnavailable && e.kind === 'authentication',
    );
    assert.ok(Date.now() - started < 10_000);
    const text = JSON.stringify(lines);
    assert.match(text, /clickhouse: authentication failed/);
    assert.equal(text.includes('Wrong-pass-1111'), false);
  });

  test('the agent inserts over HTTPS with the password from CLICKHOUSE_PASSWORD_FILE; no log line holds it', async () => {
    const { log, lines } = captureLog({ ...secretSafeOptions(), level: 'debug' });
    const world = await monitoringWorld(bootstrap, ['batch_timestamps']);
    const cfg = config({ user: USER, tls: { enabled: true, ca_file: join(dir, 'server.crt') } });
    const saved = process.env.CLICKHOUSE_PASSWORD_FILE;
    process.env.CLICKHOUSE_PASSWORD_FILE = join(dir, 'password');
    let agent: MonitoringAgent | undefined;
    try {
      agent = await startAgent(cfg, bootstrap, world, { log });
      await produce(bootstrap, rows(world, 'batch_timestamps', 0, 20));
      const login = { username: USER, password: PASSWORD, ca };
      await waitFor(
        async () => (await counts(httpsUrl, world.database, 'batch_timestamps', login)).dedup === 20,
        {
          timeoutMs: 60_000,
          message: '20 rows inserted over HTTPS',
        },
      );
    } finally {
      await agent?.stop();
      if (saved === undefined) delete process.env.CLICKHOUSE_PASSWORD_FILE;
      else process.env.CLICKHOUSE_PASSWORD_FILE = saved;
    }
    const text = JSON.stringify(lines);
    assert.match(text, /clickhouse: connected to https:/);
    assert.equal(text.includes(PASSWORD), false);
  });

  test('the test helpers log in as the product would: from CLICKHOUSE_USER, CLICKHOUSE_PASSWORD_FILE and CLICKHOUSE_CA_FILE', async () => {
    const names = [
      'CLICKHOUSE_USER',
      'CLICKHOUSE_PASSWORD',
      'CLICKHOUSE_PASSWORD_FILE',
      'CLICKHOUSE_CA_FILE',
    ];
    const saved = names.map((n) => [n, process.env[n]] as const);
    const restore = () => {
      for (const [n, v] of saved)
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
    };
    const database = `helpers_login_${process.pid}`;
    try {
      delete process.env.CLICKHOUSE_PASSWORD;
      process.env.CLICKHOUSE_USER = USER;
      process.env.CLICKHOUSE_PASSWORD_FILE = join(dir, 'password');
      process.env.CLICKHOUSE_CA_FILE = join(dir, 'server.crt');
      // No login passed anywhere: each helper takes the environment's, over HTTPS with the CA.
      await command(httpsUrl, `CREATE DATABASE IF NOT EXISTS ${database}`);
      const [one] = await query<{ n: number }>(httpsUrl, 'SELECT 1 AS n');
      assert.equal(Number(one?.n), 1);
      const dataset = await createDataset(httpsUrl);
      try {
        assert.equal(dataset.target.username, USER);
        const loglines = dataset.counts.logline_to_batches ?? 0;
        assert.ok(loglines > 0);
        const c = await counts(httpsUrl, dataset.target.database, 'logline_to_batches');
        assert.equal(c.dedup, loglines);
      } finally {
        await dataset.conn.close();
        await command(httpsUrl, `DROP DATABASE IF EXISTS ${dataset.target.database}`);
      }
      // The password really is the one used: a wrong one in the environment makes the same helper fail.
      writeFileSync(join(dir, 'wrong-password'), 'Wrong-pass-2222\n');
      process.env.CLICKHOUSE_PASSWORD_FILE = join(dir, 'wrong-password');
      await assert.rejects(
        query(httpsUrl, 'SELECT 1 AS n'),
        /Code: 193.*Wrong password for user hamstring_agent/,
      );
    } finally {
      process.env.CLICKHOUSE_PASSWORD_FILE = join(dir, 'password');
      await command(httpsUrl, `DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      restore();
    }
  });
});
