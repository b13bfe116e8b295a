import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LocalKafkaCluster } from '../../src/dev/kafka-cluster.ts';
import { projectRoot } from '../../src/dev/paths.ts';

/**
 * A fresh 1-node Kafka for one test file that pauses or kills its broker, so that its faults hit
 * nothing else (scripts/integration-lanes.ts runs it beside other files, lane `own`). It listens
 * at HAMSTRING_TEST_KAFKA_PORT (the run's port, 21092 when a file runs by hand) plus `offset`,
 * in var/test/kafka-<name>, wiped first. The caller stops it.
 */
export async function startOwnKafka(name: string, offset: number): Promise<LocalKafkaCluster> {
  const dataDir = join(projectRoot, 'var', 'test', `kafka-${name}`);
  await LocalKafkaCluster.attach(dataDir)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const basePort = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + offset;
  return LocalKafkaCluster.start({ nodes: 1, dataDir, basePort });
}
