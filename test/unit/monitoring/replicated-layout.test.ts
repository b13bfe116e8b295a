import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { ClickHouseReader } from '../../../src/app/dashboard/clickhouse-reader.ts';
import { dashboardOptionsFromConfig } from '../../../src/app/dashboard/index.ts';
import { validateConfig } from '../../../src/config/index.ts';
import { clickHouseReplicationXml } from '../../../src/dev/clickhouse-config.ts';
import { insertSettings, parseVersion } from '../../../src/monitoring/clickhouse-connection.ts';
import { clickhouseTargetsFromConfig } from '../../../src/monitoring/clickhouse-target.ts';
import { createTableSql, tableDef, tableEngineSql } from '../../../src/monitoring/tables.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { configErrorOf } from '../config/helpers.ts';

const brokers = [{ hostname: 'kafka1', internal_port: 19092, external_port: 8097 }];
const configWith = (clickhouse_server: Record<string, unknown>) =>
  validateConfig({ environment: { kafka_brokers: brokers, monitoring: { clickhouse_server } } }, { env: {} });

describe('replicated monitoring layout', () => {
  test('inserts into replicated tables are never dropped as duplicates; a single server keeps its token from 22.2', () => {
    const replication = { zookeeperPath: '/clickhouse/hamstring', replicaName: 'r1' };
    const token = () => 'alerts:a:b:2';
    for (const version of ['18.16.1', '23.8.1'])
      assert.deepEqual(insertSettings({ replication }, parseVersion(version), token), {
        insert_deduplicate: 0,
      });
    assert.equal(insertSettings({}, parseVersion('18.16.1'), token), undefined);
    assert.deepEqual(insertSettings({}, parseVersion('23.8.1'), token), {
      insert_deduplication_token: 'alerts:a:b:2',
    });
  });

  test('without `replication` there is one server and plain ReplacingMergeTree, as before', () => {
    const targets = clickhouseTargetsFromConfig(configWith({ hostname: 'ch' }));
    assert.deepEqual(
      targets.map((t) => [t.url, t.replication]),
      [['http://ch:8123', undefined]],
    );
    assert.match(
      createTableSql('mon', tableDef('alerts'), targets[0]?.replication),
      /ENGINE = ReplacingMergeTree\n/,
    );
  });

  test('with `replication`: every replica in order, each creating ReplicatedReplacingMergeTree under <path>/<db>/<table>', () => {
    const config = configWith({
      hostname: 'ch1',
      port: 18123,
      database: 'mon',
      tls: { enabled: true },
      replication: { replicas: [{ hostname: 'ch2' }, { hostname: '::1', port: 8124 }] },
    });
    const targets = clickhouseTargetsFromConfig(config);
    assert.deepEqual(
      targets.map((t) => t.url),
      ['https://ch1:18123', 'https://ch2:8123', 'https://[::1]:8124'],
    );
    for (const t of targets) {
      assert.equal(t.database, 'mon');
      assert.deepEqual(t.replication, {
        zookeeperPath: '/clickhouse/tables/{shard}/hamstring',
        replicaName: '{replica}',
      });
    }
    assert.match(
      createTableSql('mon', tableDef('alerts'), targets[0]?.replication),
      /ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/hamstring\/mon\/alerts', '\{replica\}'\)\nORDER BY \(`src_topic`, `src_partition`, `src_offset`, `row_index`\)$/,
    );
    // An explicit URL (tests, `--clickhouse-url`) is the only server.
    assert.deepEqual(
      clickhouseTargetsFromConfig(config, { url: 'http://other:1' }).map((t) => t.url),
      ['http://other:1'],
    );
    const options = dashboardOptionsFromConfig(config, { log: silentLogger() });
    assert.equal(options.clickhouse.url, 'https://ch1:18123');
    assert.deepEqual(
      options.clickhouseReplicas?.map((t) => t.url),
      ['https://ch2:8123', 'https://[::1]:8124'],
    );
  });

  test('a bad replication setting names its key path and what is expected', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ replicas: [] }, 'replication.replicas: expected at least one other replica, got []'],
      [{}, 'replication.replicas: expected list of {hostname, port}, got nothing'],
      [
        { replicas: [{ hostname: 'b', port: 0 }] },
        'replication.replicas[0].port: expected integer between 1 and 65535, got 0',
      ],
      [
        { replicas: [{ hostname: 'b' }], zookeeper_path: 'tables/' },
        'replication.zookeeper_path: expected ZooKeeper path starting with "/", not ending with "/", without quotes, backslashes or spaces, got "tables/"',
      ],
      [
        { replicas: [{ hostname: 'b' }], replica_name: "r'1" },
        `replication.replica_name: expected replica name or macro (e.g. "{replica}"), without quotes, backslashes or spaces, got "r'1"`,
      ],
    ];
    for (const [replication, message] of cases)
      assert.equal(
        configErrorOf(() => configWith({ hostname: 'a', replication })).format(),
        `config.yaml: environment.monitoring.clickhouse_server.${message}`,
      );
  });

  test('the engine refuses an argument that would break out of its string literal', () => {
    assert.throws(
      () => tableEngineSql('d', 't', { zookeeperPath: "/a'", replicaName: 'r' }),
      /quote or backslash/,
    );
  });

  test("a dev replica's config.d names its ZooKeeper, macros and the cluster's replicas", () => {
    const xml = clickHouseReplicationXml(
      {
        zookeeper: ['127.0.0.1:27401'],
        shard: '01',
        replica: 'r1',
        cluster: 'hamstring',
        replicas: [
          { host: '127.0.0.1', tcpPort: 27440 },
          { host: '127.0.0.1', tcpPort: 27441 },
        ],
      },
      '/etc/clickhouse-server/users.xml',
    );
    assert.match(xml, /<node index="1"><host>127\.0\.0\.1<\/host><port>27401<\/port><\/node>/);
    assert.match(xml, /<macros><shard>01<\/shard><replica>r1<\/replica><\/macros>/);
    assert.match(xml, /<hamstring>[\s\S]*<port>27440<\/port>[\s\S]*<port>27441<\/port>[\s\S]*<\/hamstring>/);
    assert.match(xml, /<users_config>\/etc\/clickhouse-server\/users\.xml<\/users_config>/);
  });
});

describe('the dashboard reader over replicas', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  /** A stand-in ClickHouse HTTP server answering `version()` and one query with `who`. */
  async function fakeClickHouse(who: string): Promise<string> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const query = `${decodeURIComponent(req.url ?? '')} ${body}`;
        res.setHeader('Content-Type', 'application/x-ndjson');
        if (query.includes('version()')) res.end('{"v":"18.16.1"}\n');
        else if (query.includes('bad_sql')) {
          res.statusCode = 400;
          res.end('Code: 62, e.displayText() = DB::Exception: Syntax error');
        } else res.end(`{"who":"${who}"}\n`);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  test('a replica that does not answer is passed over within the request; a query error is not', async () => {
    const closed = await fakeClickHouse('closed');
    const second = await fakeClickHouse('second');
    servers[0]?.close();
    const target = { database: 'default', connectTimeoutMs: 1000, requestTimeoutMs: 2000 };
    const reader = new ClickHouseReader([
      { ...target, url: closed },
      { ...target, url: second },
    ]);
    try {
      assert.deepEqual(await reader.rows('SELECT 1'), [{ who: 'second' }]);
      assert.equal(reader.target.url, second, 'the answering replica stays in use');
      await assert.rejects(reader.rows('SELECT bad_sql'), /Syntax error/);
      assert.equal(reader.target.url, second);
    } finally {
      await reader.close();
    }
    const none = new ClickHouseReader([{ ...target, url: closed }]);
    await assert.rejects(none.rows('SELECT 1'), /ECONNREFUSED|unreachable/);
    await none.close();
  });
});
