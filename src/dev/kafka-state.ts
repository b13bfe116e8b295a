import { join } from 'node:path';
import { z } from 'zod';

/**
 * What a Kafka data directory holds. `kafka-cluster.json` survives stops (the formatted nodes
 * belong to that cluster id and size); `kafka-state.json` is the state file of the running
 * processes and is removed by a clean stop.
 */
export const kafkaLayoutSchema = z.object({
  clusterId: z.string().min(1),
  nodes: z.union([z.literal(1), z.literal(3)]),
  basePort: z.number().int(),
  kafkaVersion: z.string(),
  createdAt: z.string(),
});
export type KafkaLayout = z.infer<typeof kafkaLayoutSchema>;

export const kafkaRunningNodeSchema = z.object({
  id: z.number().int(),
  pid: z.number().int(),
  brokerPort: z.number().int(),
  controllerPort: z.number().int(),
  startedAt: z.string(),
});

/** Everything another process needs to attach to the cluster and restart its nodes. */
export const kafkaRunningStateSchema = z.object({
  java: z.string(),
  libsDir: z.string(),
  heapMb: z.number().int(),
  bootstrapServers: z.string(),
  nodes: z.array(kafkaRunningNodeSchema),
});
export type KafkaRunningState = z.infer<typeof kafkaRunningStateSchema>;

export function kafkaLayoutFile(dataDir: string): string {
  return join(dataDir, 'kafka-cluster.json');
}

export function kafkaRunningFile(dataDir: string): string {
  return join(dataDir, 'kafka-state.json');
}

/** Per-node files: config, log4j2 config, Kafka log dir, server log, JVM stdout/stderr. */
export function kafkaNodeFiles(dataDir: string, id: number) {
  const dir = join(dataDir, `node-${id}`);
  return {
    dir,
    serverProperties: join(dir, 'server.properties'),
    log4j2: join(dir, 'log4j2.xml'),
    logDir: join(dir, 'data'),
    metaProperties: join(dir, 'data', 'meta.properties'),
    serverLog: join(dir, 'server.log'),
    processLog: join(dir, 'process.log'),
  };
}
