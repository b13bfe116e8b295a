import { LocalClickHouse } from '../dev/clickhouse-server.ts';
import { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import type { CommandIo } from './command.ts';
import { DEFAULT_CLICKHOUSE_DIR, DEFAULT_KAFKA_DIR } from './dev-options.ts';
import { seconds } from './format.ts';
import { clickHouseStatusLine, kafkaStatusLines } from './status-lines.ts';

/** Times one start so the summary can say how long each service took. */
async function timed<T>(start: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const began = Date.now();
  const value = await start();
  return { value, ms: Date.now() - began };
}

/**
 * Starts a 1-node Kafka (var/kafka, bootstrap 127.0.0.1:9092) and ClickHouse (var/clickhouse,
 * http://127.0.0.1:8123) in parallel and waits until both are ready; running services are attached to.
 */
export async function startLocalServices(io: CommandIo): Promise<void> {
  const began = Date.now();
  const [kafka, clickhouse] = await Promise.allSettled([
    timed(() => LocalKafkaCluster.start({ nodes: 1, dataDir: DEFAULT_KAFKA_DIR })),
    timed(() => LocalClickHouse.start({ dataDir: DEFAULT_CLICKHOUSE_DIR })),
  ]);
  const failures: string[] = [];
  if (kafka.status === 'fulfilled') {
    const how = kafka.value.value.wasAlreadyRunning ? 'already running' : 'started';
    io.out(`kafka ready (${how}, ${seconds(kafka.value.ms)})`);
    for (const line of kafkaStatusLines(kafka.value.value)) io.out(`  ${line}`);
  } else {
    failures.push(`kafka: ${errorMessage(kafka.reason)}`);
  }
  if (clickhouse.status === 'fulfilled') {
    const how = clickhouse.value.value.wasAlreadyRunning ? 'already running' : 'started';
    io.out(`clickhouse ready (${how}, ${seconds(clickhouse.value.ms)})`);
    io.out(`  ${clickHouseStatusLine(clickhouse.value.value)}`);
  } else {
    failures.push(`clickhouse: ${errorMessage(clickhouse.reason)}`);
  }
  if (failures.length > 0) throw new Error(failures.join('\n'));
  io.out(
    `up: local services ready in ${seconds(Date.now() - began)} (stop them with hamstring dev kafka stop / dev clickhouse stop)`,
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
