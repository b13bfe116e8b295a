/**
 * Monitoring agent benchmark: rows/s from Kafka into ClickHouse for several Kafka batch sizes
 * (pipeline.monitoring.kafka_batch.size), with the insert size fixed at the shipped 50 rows.
 *
 *   node --import tsx bench/monitoring.ts [--rows N] [--insert-batch 50]
 *
 * Uses the test fixtures' Kafka and ClickHouse (HAMSTRING_TEST_KAFKA_PORT /
 * HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT select them). The rows are produced before the agent starts,
 * so the number is the agent's catch-up throughput: consume, validate, insert, commit.
 */
import { parseArgs } from 'node:util';
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
    rows: { type: 'string', default: '20000' },
    'insert-batch': { type: 'string', default: '50' },
  },
});
const N = Number(values.rows);
const insertBatch = Number(values['insert-batch']);
const KAFKA_BATCHES = [100, 500, 2000];

async function main(): Promise<void> {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  const results: { kafkaBatch: number; seconds: number; rowsPerSecond: number; inserts: number }[] = [];
  for (const kafkaBatch of KAFKA_BATCHES) {
    const world = await monitoringWorld(k.bootstrap, ['logline_to_batches'], 3);
    await produce(k.bootstrap, rows(world, 'logline_to_batches', 0, N));
    const t0 = performance.now();
    const agent = await startAgent(
      testConfig(k.bootstrap, ch.url, { kafkaBatch, insertBatch }),
      k.bootstrap,
      world,
    );
    for (;;) {
      const c = await counts(ch.url, world.database, 'logline_to_batches');
      if (c.raw >= N) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - t0) / 1000;
    const inserts =
      (await agent.metrics.insertSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ??
      0;
    await agent.stop();
    results.push({
      kafkaBatch,
      seconds: Number(seconds.toFixed(2)),
      rowsPerSecond: Math.round(N / seconds),
      inserts,
    });
  }
  console.log(`monitoring agent: ${N} rows, ClickHouse insert batch ${insertBatch}, server ${ch.url}`);
  console.table(results);
  process.exit(0);
}

void main();
