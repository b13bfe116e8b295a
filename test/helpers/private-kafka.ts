import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { LocalKafkaCluster } from '../../src/dev/kafka-cluster.ts';
import { stuckNativeCalls } from '../../src/kafka/abandoned-clients.ts';
import { projectRoot } from '../../src/dev/paths.ts';

const listenable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** A free broker port whose controller port (+1) is free too. */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i += 1) {
    // Below the ephemeral range (32768+) and clear of the fixed ports of other files (24092, 29092).
    const port = 30_100 + Math.floor(Math.random() * 2_500);
    if ((await listenable(port)) && (await listenable(port + 1))) return port;
  }
  throw new Error('no free port pair for a private Kafka');
}

/**
 * A 1-node cluster of the test's own, on free ports under var/test: for tests that kill, pause or
 * restart the broker while the run-wide one serves other files. `stop()` removes it.
 */
export async function startPrivateKafka(
  name: string,
): Promise<{ cluster: LocalKafkaCluster; bootstrap: string; stop(): Promise<void> }> {
  const basePort = await freePortPair();
  const dataDir = join(projectRoot, 'var', 'test', `kafka-${name}-${basePort}`);
  rmSync(dataDir, { recursive: true, force: true });
  const cluster = await LocalKafkaCluster.start({ nodes: 1, dataDir, basePort });
  return {
    cluster,
    bootstrap: cluster.bootstrapServers,
    stop: async () => {
      // A client close that timed out goes on in a pool thread until the broker answers; stopping
      // the broker under it would leave that thread, and so the test process at exit, hanging.
      const deadline = Date.now() + 30_000;
      while (stuckNativeCalls() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
