import { Writable } from 'node:stream';
import { createClient, ClickHouseLogLevel } from '@clickhouse/client';
import { pino, type Logger } from 'pino';
import { validateConfig } from '../../../src/config/load.ts';
import type { HamstringConfig } from '../../../src/config/schema.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import {
  startMonitoringAgent,
  type MonitoringAgent,
  type MonitoringAgentOptions,
} from '../../../src/app/monitoring-agent.ts';
import { monitoringEvent } from '../../../src/monitoring/events.ts';
import { dedupCountSql, distinctIdentityCountSql, rawCountSql } from '../../../src/monitoring/queries.ts';
import { tableDef, type TableDef, type TableName } from '../../../src/monitoring/tables.ts';
import type { StageOutput } from '../../../src/runtime/stage.ts';
import { testClickHouseLogin, type TestClickHouseLogin } from '../../helpers/clickhouse-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { createTopics, testKafkaOptions } from '../../support/pipeline-harness.ts';

/** Names of one test's world: topics under a unique prefix, its own database and group. */
export interface MonitoringWorld {
  prefix: string;
  dlt: string;
  database: string;
  group: string;
  tables: TableDef[];
}

export async function monitoringWorld(
  bootstrap: string,
  tables: TableName[],
  partitions = 2,
): Promise<MonitoringWorld> {
  const base = uniqueTopic('mon');
  const prefix = `${base}-clickhouse_`;
  const world = {
    prefix,
    dlt: `${prefix}dlt`,
    database: `mon_${base.replace(/-/g, '_')}`,
    group: uniqueGroup('monitoring'),
    tables: tables.map(tableDef),
  };
  await createTopics(bootstrap, [...tables.map((t) => `${prefix}${t}`), world.dlt], partitions);
  return world;
}

/** The world of another process (the crash test's child). */
export function monitoringWorldOf(
  prefix: string,
  database: string,
  group: string,
  tables: TableName[],
): MonitoringWorld {
  return { prefix, dlt: `${prefix}dlt`, database, group, tables: tables.map(tableDef) };
}

export function testConfig(
  bootstrap: string,
  clickhouseUrl: string,
  over: { insertBatch?: number; kafkaBatch?: number; replication?: Record<string, unknown> } = {},
): HamstringConfig {
  const url = new URL(clickhouseUrl);
  return validateConfig(
    {
      environment: {
        kafka_bootstrap_servers: bootstrap,
        monitoring: {
          clickhouse_server: {
            hostname: url.hostname,
            port: Number(url.port),
            ...(over.replication ? { replication: over.replication } : {}),
          },
        },
      },
      pipeline: {
        monitoring: {
          clickhouse_connector: {
            batch_size: over.insertBatch ?? 50,
            batch_timeout: 2,
            connect_timeout_seconds: 2,
            operation_timeout_seconds: 5,
          },
          kafka_batch: { size: over.kafkaBatch ?? 500, timeout_ms: 200 },
        },
      },
    },
    { env: {} },
  );
}

/** Log lines the agent wrote, for asserting that a back-off loop is visible. */
export class CapturedLog {
  readonly lines: Record<string, unknown>[] = [];
  readonly logger: Logger;
  constructor() {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const line of chunk.toString().split('\n'))
          if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    this.logger = pino({ level: 'info' }, sink);
  }
  messages(): string[] {
    return this.lines.map((l) => String(l.msg));
  }
}

export function startAgent(
  config: HamstringConfig,
  bootstrap: string,
  world: MonitoringWorld,
  over: MonitoringAgentOptions = {},
): Promise<MonitoringAgent> {
  return startMonitoringAgent(config, {
    instanceId: 'test',
    log: silentLogger(),
    groupId: world.group,
    topicPrefix: world.prefix,
    database: world.database,
    tables: world.tables,
    kafka: testKafkaOptions(bootstrap, { groupId: world.group }),
    reconnectBackOff: () => 200,
    ...over,
  });
}

/** Rows for `count` source records, one per record, as a stage would emit them. */
export function rows(world: MonitoringWorld, table: TableName, from: number, count: number): StageOutput[] {
  const out: StageOutput[] = [];
  for (let i = from; i < from + count; i += 1) {
    const src = { topic: 'source', partition: i % 3, offset: i };
    out.push(monitoringEvent(table, src, 0, sampleRow(table, i) as never, world.prefix));
  }
  return out;
}

function sampleRow(table: TableName, i: number): Record<string, unknown> {
  switch (table) {
    case 'logline_to_batches':
      return { logline_id: `l-${i}`, batch_id: `b-${i % 10}` };
    case 'batch_timestamps':
      return {
        batch_id: `b-${i}`,
        stage: 'log_collection.collector',
        instance_name: 'c',
        status: 'completed',
        timestamp: 1_700_000_000_000 + i,
        is_active: true,
        message_count: i,
      };
    case 'alerts':
      return {
        client_ip: '10.0.0.1',
        alert_timestamp: new Date(1_700_000_000_000 + i).toISOString(),
        suspicious_batch_id: `s-${i}`,
        overall_score: 0.5,
        domain_names: '[]',
        result: '[]',
      };
    case 'fill_levels':
      return { timestamp: 1_700_000_000_000 + i, stage: 'x', entry_type: 'total_loglines', entry_count: i };
    default:
      throw new Error(`no sample for ${table}`);
  }
}

/** Produces records (non-transactional; the test is the stage here). */
export async function produce(bootstrap: string, records: StageOutput[]): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'mon-seed',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  for (const r of records) await p.produce(r);
  await p.flush(60_000);
  const t = p.tally();
  await p.close(10_000);
  if (t.failed > 0) throw new Error(`producing failed for ${t.failed} records: ${t.firstError?.message}`);
}

export type { TestClickHouseLogin };

/** A client with `login`, else the one the environment gives (testClickHouseLogin). */
function testClient(url: string, login: TestClickHouseLogin = testClickHouseLogin(), timeoutMs = 10_000) {
  return createClient({
    url,
    request_timeout: timeoutMs,
    log: { level: ClickHouseLogLevel.OFF },
    ...(login.username !== undefined ? { username: login.username } : {}),
    ...(login.password !== undefined ? { password: login.password } : {}),
    ...(login.ca !== undefined ? { tls: { ca_cert: login.ca } } : {}),
  });
}

/** Counts in ClickHouse: raw (duplicates included), through the dedup view, by distinct identity. */
export async function counts(
  url: string,
  database: string,
  table: string,
  login?: TestClickHouseLogin,
): Promise<{ raw: number; dedup: number; distinct: number }> {
  const client = testClient(url, login);
  try {
    const one = async (query: string) => {
      const rs = await client.query({ query, format: 'JSONEachRow' });
      const [row] = await rs.json<{ n: string | number }>();
      return Number(row?.n ?? 0);
    };
    return {
      raw: await one(rawCountSql(database, table)),
      dedup: await one(dedupCountSql(database, table)),
      distinct: await one(distinctIdentityCountSql(database, table)),
    };
  } finally {
    await client.close();
  }
}

export async function query<T>(url: string, sql: string, login?: TestClickHouseLogin): Promise<T[]> {
  const client = testClient(url, login);
  try {
    const rs = await client.query({ query: sql, format: 'JSONEachRow' });
    return await rs.json<T>();
  } finally {
    await client.close();
  }
}

export async function command(
  url: string,
  sql: string,
  login?: TestClickHouseLogin,
  timeoutMs?: number,
): Promise<void> {
  const client = testClient(url, login, timeoutMs);
  try {
    await client.command({ query: sql });
  } finally {
    await client.close();
  }
}

/**
 * Drops a test's database. Dropping a pipeline's tables and views waits for their merges, which on
 * a loaded CI host took longer than the 10 s other statements get (the drop timed out after a
 * passing test); a minute is what it gets here.
 */
export async function dropDatabase(url: string, database: string): Promise<void> {
  await command(url, `DROP DATABASE IF EXISTS ${database}`, undefined, 60_000);
}
