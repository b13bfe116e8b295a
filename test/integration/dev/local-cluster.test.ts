import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { describePartitions, ensureTopic, type PartitionState } from '../../../src/kafka/readiness.ts';
import { readProbeIds, startProbeLoad } from '../../support/probe-load.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** Its own ports and data dir: it runs next to the run-wide 1-node cluster (19092). */
const DATA_DIR = join(projectRoot, 'var', 'test', 'kafka-3-nodes');
const BASE_PORT = 29092;

let cluster: LocalKafkaCluster;
let bootstrap: string;

async function partitionsOf(topic: string): Promise<PartitionState[]> {
  return (await describePartitions(bootstrap, 5000)).partitions.filter((p) => p.topic === topic);
}

function inSync(p: PartitionState): boolean {
  return p.leader >= 0 && p.isr.length === p.replicas.length;
}

describe('local 3-node Kafka cluster', () => {
  before(async () => {
    await LocalKafkaCluster.attach(DATA_DIR)?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
    const began = Date.now();
    cluster = await LocalKafkaCluster.start({ nodes: 3, dataDir: DATA_DIR, basePort: BASE_PORT });
    bootstrap = cluster.bootstrapServers;
    process.stderr.write(`# 3-node cluster formatted, started and ready in ${Date.now() - began} ms\n`);
  });

  after(async () => {
    await cluster?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  test('keeps acknowledging acks=all writes when the leader of partition 0 is killed, loses none, and the node rejoins every ISR', async () => {
    const topic = uniqueTopic('failover');
    await ensureTopic(
      bootstrap,
      { topic, partitions: 3, replicationFactor: 3, config: { 'min.insync.replicas': '2' } },
      30_000,
    );
    const load = await startProbeLoad(bootstrap, topic);
    const progress = () => ({ sent: load.sent, acked: load.acked.size, failures: load.failures.slice(0, 3) });
    try {
      await waitFor(() => load.acked.size >= 500, {
        timeoutMs: 30_000,
        message: 'writes before the kill',
        observe: progress,
      });

      const victim = (await partitionsOf(topic)).find((p) => p.partition === 0)!.leader;
      assert.ok(cluster.nodeIds().includes(victim), `partition 0 has a leader (${victim})`);
      await cluster.killNode(victim);
      assert.equal(cluster.isNodeRunning(victim), false);
      const ackedAtKill = load.acked.size;

      await waitFor(
        async () => {
          const p0 = (await partitionsOf(topic)).find((p) => p.partition === 0);
          return p0 !== undefined && p0.leader >= 0 && p0.leader !== victim;
        },
        { timeoutMs: 30_000, message: `partition 0 elects a leader other than node ${victim}` },
      );
      await waitFor(() => load.acked.size >= ackedAtKill + 2000, {
        timeoutMs: 60_000,
        message: 'writes keep being acknowledged with one node down',
        observe: progress,
      });

      await cluster.startNode(victim);
      assert.equal(cluster.isNodeRunning(victim), true);
      const all = (await describePartitions(bootstrap, 5000)).partitions;
      const lagging = all.filter(
        (p) => !inSync(p) || (p.replicas.includes(victim) && !p.isr.includes(victim)),
      );
      assert.deepEqual(lagging, [], 'every partition is fully in sync after startNode');

      const ackedAtRestart = load.acked.size;
      await waitFor(() => load.acked.size >= ackedAtRestart + 500, {
        timeoutMs: 30_000,
        message: 'writes after the node rejoined',
        observe: progress,
      });
    } finally {
      await load.stop();
    }

    assert.deepEqual(load.failures, [], 'no delivery failed');
    const read = await readProbeIds(bootstrap, topic, { expected: load.acked.size, timeoutMs: 60_000 });
    const lost = [...load.acked].filter((id) => !read.ids.has(id));
    assert.equal(lost.length, 0, `acknowledged records lost, e.g. ${lost.slice(0, 5).join(', ')}`);
    assert.equal(read.records, read.ids.size, 'no record was written twice (idempotent producer)');
  });

  test('a paused node drops out of the ISR and catches up after resume', async () => {
    const topic = uniqueTopic('pause');
    await ensureTopic(bootstrap, { topic, partitions: 3, replicationFactor: 3 }, 30_000);
    const paused = cluster.nodeIds().at(-1)!;
    cluster.pauseNode(paused);
    try {
      assert.equal(cluster.nodeState(paused), 'stopped');
      await waitFor(async () => (await partitionsOf(topic)).every((p) => !p.isr.includes(paused)), {
        timeoutMs: 60_000,
        message: `node ${paused} is fenced out of the ISR while paused`,
      });
    } finally {
      cluster.resumeNode(paused);
    }
    await waitFor(async () => (await describePartitions(bootstrap, 5000)).partitions.every(inSync), {
      timeoutMs: 60_000,
      message: `node ${paused} rejoins every ISR after resume`,
    });
  });
});
