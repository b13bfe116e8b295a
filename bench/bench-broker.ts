import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Broker {
  bootstrap: string;
  /** With `secure`: the SASL_SSL (SCRAM-SHA-512) listener, and what a client needs to use it. */
  saslSsl?: { bootstrap: string; caFile: string; username: string; password: string };
  release(): Promise<void>;
}

const BENCH_USER = { name: 'bench', password: 'bench-secret' };

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
  secure = false,
): Promise<Broker> {
  const fromEnv = process.env.HAMSTRING_BENCH_BOOTSTRAP;
  if (fromEnv && secure)
    throw new Error('--security sasl_ssl needs the bench broker (unset HAMSTRING_BENCH_BOOTSTRAP)');
  if (fromEnv) return { bootstrap: fromEnv, release: () => Promise.resolve() };
  if (!existsSync(new URL('src/dev/kafka-cluster.ts', ROOT)))
    throw new Error('set HAMSTRING_BENCH_BOOTSTRAP=host:port (src/dev/kafka-cluster.ts is not available)');
  const { LocalKafkaCluster } = await import('../src/dev/kafka-cluster.ts');
  // SCRAM users exist only in storage formatted with them: the secured broker has a directory of its own.
  const dataDir = fileURLToPath(new URL(secure ? 'var/bench/kafka-secure' : 'var/bench/kafka', ROOT));
  log(
    `starting a 1-node Kafka in ${dataDir} on port ${basePort}${secure ? ' with a SASL_SSL listener' : ''}`,
  );
  const { createKafkaCertificates } = await import('../src/dev/kafka-tls.ts');
  const certificates = secure ? createKafkaCertificates(`${dataDir}/certs`) : undefined;
  const cluster = await LocalKafkaCluster.start({
    nodes: 1,
    dataDir,
    basePort,
    ...(certificates ? { security: { certificates, users: [BENCH_USER] } } : {}),
  });
  return {
    bootstrap: cluster.bootstrapServers,
    ...(certificates
      ? {
          saslSsl: {
            bootstrap: cluster.saslSslBootstrap,
            caFile: certificates.caCert,
            username: BENCH_USER.name,
            password: BENCH_USER.password,
          },
        }
      : {}),
    release: async () => {
      if (keep) return log(`broker left running at ${cluster.bootstrapServers}`);
      log('stopping the bench broker');
      await cluster.stop();
    },
  };
}
