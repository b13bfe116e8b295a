import { randomBytes } from 'node:crypto';
import {
  ClickHouseConnection,
  type ClickHouseTarget,
} from '../../../src/monitoring/clickhouse-connection.ts';
import { TABLES, tableRowSchema, type RowInput, type TableName } from '../../../src/monitoring/tables.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testClickHouseLogin } from '../../helpers/clickhouse-fixture.ts';

/**
 * A small pipeline's monitoring rows, written through the project's own table definitions (DDL and
 * row schemas), as the stages and the agent would leave them: lines of six hosts over the last
 * minute, collector batches every 10 s, suspicious batches and alerts for the two infected hosts,
 * fill levels and the runtime's batch events.
 */
export interface MonitoringDataset {
  target: ClickHouseTarget;
  conn: ClickHouseConnection;
  /** Rows written per table. */
  counts: Partial<Record<TableName, number>>;
  infected: readonly string[];
  benign: readonly string[];
  /** Latest line time (epoch ms). */
  now: number;
  /** Writes rows of one table (validated by its row schema), each with a new identity. */
  insert<T extends TableName>(table: T, rows: RowInput<T>[]): Promise<void>;
  /** Writes rows again with the identities they had from `firstOffset` on: what an agent replay does. */
  replay<T extends TableName>(table: T, firstOffset: number, rows: RowInput<T>[]): Promise<void>;
}

export const STAGES = {
  collector: 'log_collection.collector',
  prefilter: 'log_filtering.prefilter',
  inspector: 'data_inspection.inspector',
  detector: 'data_analysis.detector',
} as const;

/** Fixed stage delays (ms) the latency assertions check against. */
export const DELAYS = {
  batched: 10,
  collectorCompleted: 100,
  prefilter: 200,
  inspector: 250,
  suspicious: 300,
  detector: 350,
  alert: 500,
} as const;

export const BATCH_MS = 10_000;

export interface DatasetShape {
  /** How far back the lines go; default 60 s. */
  seconds?: number;
  /** One line every this many ms; default 500. */
  lineEveryMs?: number;
}

export async function createDataset(
  url: string,
  // Alerts reach up to a second past `now`; starting 2 s back keeps every row in the past, so a query
  // that ends at the current time sees them all however fast the test runs.
  now = Date.now() - 2_000,
  shape: DatasetShape = {},
  /** User, password and CA; default the environment's, as the product reads them (testClickHouseLogin). */
  login: Pick<ClickHouseTarget, 'username' | 'password' | 'ca'> = testClickHouseLogin(),
): Promise<MonitoringDataset> {
  const database = `dash_${process.pid}_${randomBytes(3).toString('hex')}`;
  const target: ClickHouseTarget = {
    url,
    database,
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    ...login,
  };
  const conn = await ClickHouseConnection.open(target);
  await conn.ensureTables(TABLES, silentLogger());
  const counts: Partial<Record<TableName, number>> = {};
  const write = async <T extends TableName>(table: T, start: number, rows: RowInput<T>[]): Promise<void> => {
    const values = rows.map((row, i) =>
      tableRowSchema(table).parse({
        src_topic: `clickhouse_${table}`,
        src_partition: 0,
        src_offset: start + i,
        row_index: 0,
        ...row,
      }),
    );
    for (let i = 0; i < values.length; i += 50_000)
      await conn.client.insert({
        table: `${database}.${table}`,
        values: values.slice(i, i + 50_000),
        format: 'JSONEachRow',
      });
  };
  const insert = async <T extends TableName>(table: T, rows: RowInput<T>[]): Promise<void> => {
    const start = counts[table] ?? 0;
    counts[table] = start + rows.length;
    await write(table, start, rows);
  };
  const replay = <T extends TableName>(table: T, firstOffset: number, rows: RowInput<T>[]) =>
    write(table, firstOffset, rows);
  const benign = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'];
  const infected = ['10.0.0.5', '10.0.0.6'];
  const hosts = [...benign, ...infected];
  const dataset: MonitoringDataset = { target, conn, counts, infected, benign, now, insert, replay };
  await writePipeline(dataset, hosts, now, shape.seconds ?? 60, shape.lineEveryMs ?? 500);
  return dataset;
}

async function writePipeline(
  d: MonitoringDataset,
  hosts: readonly string[],
  now: number,
  seconds: number,
  lineEveryMs: number,
): Promise<void> {
  const start = now - seconds * 1000;
  const serverLogs: RowInput<'server_logs'>[] = [];
  const loglines: RowInput<'loglines'>[] = [];
  const lineTimes: RowInput<'logline_timestamps'>[] = [];
  const lineBatches: RowInput<'logline_to_batches'>[] = [];
  const batchTimes: RowInput<'batch_timestamps'>[] = [];
  const suspiciousToBatch: RowInput<'suspicious_batches_to_batch'>[] = [];
  const suspiciousTimes: RowInput<'suspicious_batch_timestamps'>[] = [];
  const alerts: RowInput<'alerts'>[] = [];
  const fill: RowInput<'fill_levels'>[] = [];
  const workerBatches: RowInput<'worker_batches'>[] = [];
  let line = 0;
  for (let batchStart = start; batchStart < now; batchStart += BATCH_MS) {
    const batchId = `batch-${batchStart}`;
    const batchEnd = batchStart + BATCH_MS;
    const hostsInBatch = new Set<string>();
    let inBatch = 0;
    for (let t = batchStart; t < batchEnd && t <= now; t += lineEveryMs) {
      const host = hosts[line % hosts.length]!;
      const id = `line-${line}`;
      const infected = d.infected.includes(host);
      const domain = infected ? `x${line}qzkvbw.com` : `www.example${line % 3}.org`;
      serverLogs.push({
        message_id: id,
        timestamp_in: t,
        message_text: JSON.stringify({ src_ip: host, domain_name: domain }),
      });
      loglines.push({
        logline_id: id,
        subnet_id: '10.0.0.0_24',
        timestamp: t,
        status: 'finished',
        client_ip: host,
        record_type: 'A',
        additional_fields: JSON.stringify({
          domain_name: domain,
          status_code: infected ? 'NXDOMAIN' : 'NOERROR',
        }),
      });
      lineTimes.push(
        { logline_id: id, stage: STAGES.collector, status: 'in_process', timestamp: t, is_active: true },
        {
          logline_id: id,
          stage: STAGES.collector,
          status: 'batched',
          timestamp: t + DELAYS.batched,
          is_active: false,
        },
      );
      lineBatches.push({ logline_id: id, batch_id: batchId });
      hostsInBatch.add(host);
      inBatch += 1;
      line += 1;
    }
    const sent = batchEnd;
    const batchRow = (stage: string, status: string, at: number) => ({
      batch_id: batchId,
      stage,
      instance_name: stage.split('.')[1]!,
      status,
      timestamp: at,
      is_active: false,
      message_count: inBatch,
    });
    batchTimes.push(
      batchRow(STAGES.collector, 'completed', sent + DELAYS.collectorCompleted),
      batchRow(STAGES.prefilter, 'finished', sent + DELAYS.prefilter),
      batchRow(STAGES.inspector, 'in_process', sent + DELAYS.inspector),
    );
    for (const host of hostsInBatch) {
      if (!d.infected.includes(host)) continue;
      const sid = `suspicious-${batchStart}-${host}`;
      suspiciousToBatch.push({ suspicious_batch_id: sid, batch_id: batchId });
      const srow = (stage: string, instance: string, at: number) => ({
        suspicious_batch_id: sid,
        client_ip: host,
        stage,
        instance_name: instance,
        status: 'in_process',
        timestamp: at,
        is_active: true,
        message_count: 2,
      });
      suspiciousTimes.push(
        srow(STAGES.inspector, 'dga_inspector', sent + DELAYS.suspicious),
        srow(STAGES.detector, 'dga_detector', sent + DELAYS.detector),
      );
      if (sent + DELAYS.alert <= now + 1000) {
        alerts.push({
          client_ip: host,
          alert_timestamp: sent + DELAYS.alert,
          suspicious_batch_id: sid,
          overall_score: host === d.infected[0] ? 0.97 : 0.81,
          domain_names: JSON.stringify([`a${batchStart % 97}qzkvbw.com`, `b${batchStart % 89}xjq.net`]),
          result: JSON.stringify([{ family: host === d.infected[0] ? 'conficker' : 'tunnel' }]),
        });
      }
    }
  }
  for (let t = start; t <= now; t += 1000) {
    fill.push({
      timestamp: t,
      stage: STAGES.collector,
      entry_type: 'total_loglines',
      entry_count: Math.round(((t - start) % BATCH_MS) / lineEveryMs),
    });
    for (const stage of Object.values(STAGES)) {
      workerBatches.push({
        stage,
        instance_name: `${stage}-1`,
        consumer_group: stage,
        event: 'committed',
        epoch: 1,
        topic: `in-${stage}`,
        partition: 0,
        first_offset: t,
        last_offset: t + 1,
        records: 2,
        batch_partitions: 1,
        batch_records: 2,
        outputs: 2,
        dead_letters: 0,
        reason: null,
        timestamp: t,
      });
    }
  }
  await d.insert('server_logs', serverLogs);
  await d.insert('failed_loglines', [
    {
      message_text: '{"ts":"bad"}',
      timestamp_in: now - 5000,
      timestamp_failed: now - 4990,
      reason_for_failure: 'ts: not a timestamp',
    },
  ]);
  await d.insert('loglines', loglines);
  await d.insert('logline_timestamps', lineTimes);
  await d.insert('logline_to_batches', lineBatches);
  await d.insert('batch_timestamps', batchTimes);
  await d.insert('suspicious_batches_to_batch', suspiciousToBatch);
  await d.insert('suspicious_batch_timestamps', suspiciousTimes);
  await d.insert('alerts', alerts);
  await d.insert('fill_levels', fill);
  await d.insert('worker_batches', workerBatches);
}

export async function dropDataset(d: MonitoringDataset): Promise<void> {
  await d.conn.command(`DROP DATABASE IF EXISTS ${d.target.database}`);
  await d.conn.close();
}
