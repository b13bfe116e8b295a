import { LocalKafkaCluster } from '../../src/dev/kafka-cluster.ts';
import { defaultVarDir } from '../../src/dev/paths.ts';

/** The Kafka a test file talks to. */
export interface TestKafka {
  bootstrap: string;
  cluster: LocalKafkaCluster;
}

/**
 * Base port of the cluster a test file started by hand starts (HAMSTRING_TEST_KAFKA_PORT overrides).
 * Every fixed port of the tests and benches is below Linux's ephemeral range (32768-60999), where a
 * client connection's local port can hold it when a server starts.
 */
const STANDALONE_BASE_PORT = 21092;

let shared: Promise<TestKafka> | undefined;

/**
 * The run-wide Kafka named by HAMSTRING_TEST_KAFKA_DIR (started by
 * scripts/run-integration-tests.ts). Without it (one file run by hand) a 1-node cluster in
 * `var/test-kafka-<port>` is started and left running for the next run to reuse. Either way the
 * cluster is ready when this resolves, and a node a previous test left dead is restarted.
 */
export function testKafka(): Promise<TestKafka> {
  shared ??= connect().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

async function connect(): Promise<TestKafka> {
  const dir = process.env.HAMSTRING_TEST_KAFKA_DIR;
  const port = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? STANDALONE_BASE_PORT);
  const dataDir = dir ?? defaultVarDir(`test-kafka-${port}`);
  const nodes = LocalKafkaCluster.attach(dataDir)?.nodeIds().length === 3 ? 3 : 1;
  // start() attaches to a running cluster and only waits for readiness.
  const cluster = await LocalKafkaCluster.start({ nodes, dataDir, ...(dir ? {} : { basePort: port }) });
  return { bootstrap: cluster.bootstrapServers, cluster };
}
