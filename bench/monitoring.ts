/**
 * Monitoring agent benchmark: rows/s from Kafka into ClickHouse at the old and the new shipped
 * settings (pipeline.monitoring.clickhouse_connector.batch_size, rows per insert, and
 * pipeline.monitoring.kafka_batch.size, records per Kafka batch), or at one pair given on the
 * command line. The rows are spread over four monitoring tables, as the pipeline spreads its rows: a
 * Kafka batch is shared by the tables, so it bounds the rows of each table's insert.
 *
 *   node --import tsx bench/monitoring.ts [--rows N] [--insert-batch 50 --kafka-batch 500]
 *
 * Uses the test fixtures' Kafka and ClickHouse (HAMSTRING_TEST_KAFKA_PORT /
 * HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT select them). The rows are produced before the agent starts,
 * so the number is the agent's catch-up throughput: consume, validate, insert, commit.
 */
import { parseArgs } from 'node:util';
import type { TableName } from '../src/monitoring/tables.ts';
import { testClickHouse } from '../test/helpers/clickhouse-fixture.ts';
import { testKafka } from '../test/helpers/kafka-fixture.ts';
import {
  counts,
  monitoringWorld,
  produce,
  rows,
  startAgent,
  testConfig,
} from '../test/integration/monitoring/support.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '35000' },
    'insert-batch': { type: 'string' },
    'kafka-batch': { type: 'string' },
  },
});
const N = Number(values.rows);
/** The tables the test fixtures have sample rows for; the pipeline writes these and a few more. */
const TABLE_NAMES: TableName[] = ['logline_to_batches', 'batch_timestamps', 'fill_levels', 'alerts'];
const SETTINGS =
  values['insert-batch'] !== undefined || values['kafka-batch'] !== undefined
    ? [
        {
          label: 'given',
          insertBatch: Number(values['insert-batch'] ?? 1000),
          kafkaBatch: Number(values['kafka-batch'] ?? 5000),
        },
      ]
    : [
        { label: 'before (50 / 500)', insertBatch: 50, kafkaBatch: 500 },
        { label: 'shipped (1000 / 5000)', insertBatch: 1000, kafkaBatch: 5000 },
      ];

async function main(): Promise<void> {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  const perTable = Math.ceil(N / TABLE_NAMES.length);
  const results = [];
  for (const { label, insertBatch, kafkaBatch } of SETTINGS) {
    const world = await monitoringWorld(k.bootstrap, TABLE_NAMES, 3);
    await produce(
      k.bootstrap,
      TABLE_NAMES.flatMap((t) => rows(world, t, 0, perTable)),
    );
    const t0 = performance.now();
    const agent = await startAgent(
      testConfig(k.bootstrap, ch.url, { kafkaBatch, insertBatch }),
      k.bootstrap,
      world,
    );
    for (;;) {
      let raw = 0;
      for (const t of TABLE_NAMES) raw += (await counts(ch.url, world.database, t)).raw;
      if (raw >= perTable * TABLE_NAMES.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    const inserts =
      (await agent.metrics.insertSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ??
      0;
    await agent.stop();
    const total = perTable * TABLE_NAMES.length;
    results.push({
      settings: label,
      seconds: Number(seconds.toFixed(2)),
      rowsPerSecond: Math.round(total / seconds),
      inserts,
      rowsPerInsert: Math.round(total / Math.max(1, inserts)),
    });
  }
  console.log(
    `monitoring agent: ${perTable * TABLE_NAMES.length} rows over ${TABLE_NAMES.length} tables, 3 partitions each, server ${ch.url}`,
  );
  console.table(results);
  process.exit(0);
}

void main();
