import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  assertExactlyOnce,
  createTopics,
  passThroughStage,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
let cluster: LocalKafkaCluster;
before(async () => {
  ({ bootstrap, cluster } = await testKafka());
});

const API_TIMEOUT = 5_000;

async function withLoad(name: string, fault: (w: TransactionalWorker) => Promise<void>) {
  const input = uniqueTopic(`${name}-in`);
  const output = uniqueTopic(`${name}-out`);
  const group = uniqueGroup(name);
  await createTopics(bootstrap, [input, output], 3);
  await seed(bootstrap, input, 0, 3_000);
  const w = new TransactionalWorker({
    stage: passThroughStage(input, output, group),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: API_TIMEOUT, messageTimeoutMs: 20_000 }),
    batch: { size: 20, timeoutMs: 20 },
    log: silentLogger(),
  });
  await w.start();
  try {
    await waitFor(() => w.status().committedTransactions >= 5, {
      timeoutMs: 60_000,
      message: 'worker under load',
    });
    await fault(w);
    await seed(bootstrap, input, 3_000, 500);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 3_500, timeoutMs: 180_000 });
  } finally {
    await w.stop();
  }
  return w;
}

describe('broker faults under load (1-node cluster)', () => {
  after(async () => {
    for (const id of cluster.nodeIds()) if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  });

  test('the broker stopped (SIGSTOP) longer than the API timeout, then resumed', async () => {
    const w = await withLoad('sigstop', async () => {
      const [id] = cluster.nodeIds();
      cluster.pauseNode(id!);
      await new Promise((r) => setTimeout(r, API_TIMEOUT * 2.5));
      cluster.resumeNode(id!);
    });
    assert.ok(w.status().committedTransactions > 5);
  });

  test('the broker killed -9 and restarted during load', async () => {
    let commitsAtRestart = 0;
    const w = await withLoad('brokerkill', async (worker) => {
      const [id] = cluster.nodeIds();
      await cluster.killNode(id!);
      await new Promise((r) => setTimeout(r, 3_000));
      await cluster.startNode(id!);
      commitsAtRestart = worker.status().committedTransactions;
    });
    // Whether librdkafka rides out a 3 s outage or the worker goes through its reconnect loop depends
    // on timing; either way it must commit again by itself, and exactly once must hold (withLoad).
    assert.ok(
      w.status().committedTransactions > commitsAtRestart,
      'the worker commits again after the restart',
    );
  });
});
