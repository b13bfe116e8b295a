import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Broker {
  bootstrap: string;
  release(): Promise<void>;
}

const ROOT = new URL('../', import.meta.url);

/**
 * The broker a benchmark runs on: `HAMSTRING_BENCH_BOOTSTRAP=host:port` if set (left alone at the
 * end), else a 1-node Kafka of its own in var/bench/kafka on `basePort`, stopped at the end unless
 * `keep`.
 */
export async function obtainBroker(
  basePort: number,
  keep: boolean,
  log: (m: string) => void,
): Promise<Broker> {
  const fromEnv = process.env.HAMSTRING_BENCH_BOOTSTRAP;
  if (fromEnv) return { bootstrap: fromEnv, release: () => Promise.resolve() };
  if (!existsSync(new URL('src/dev/kafka-cluster.ts', ROOT)))
    throw new Error('set HAMSTRING_BENCH_BOOTSTRAP=host:port (src/dev/kafka-cluster.ts is not available)');
  const { LocalKafkaCluster } = await import('../src/dev/kafka-cluster.ts');
  const dataDir = fileURLToPath(new URL('var/bench/kafka', ROOT));
  log(`starting a 1-node Kafka in ${dataDir} on port ${basePort}`);
  const cluster = await LocalKafkaCluster.start({ nodes: 1, dataDir, basePort });
  return {
    bootstrap: cluster.bootstrapServers,
    release: async () => {
      if (keep) return log(`broker left running at ${cluster.bootstrapServers}`);
      log('stopping the bench broker');
      await cluster.stop();
    },
  };
}
