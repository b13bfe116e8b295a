import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker, type WorkerHooks } from '../../../src/runtime/index.ts';
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

type Recovery = Parameters<NonNullable<WorkerHooks['onRecovery']>>[0];

async function reconnectAttempts(w: TransactionalWorker): Promise<number> {
  return (await w.metrics.reconnectAttempts.get()).values[0]?.value ?? 0;
}

/** Runs the pass-through under load through `fault`; returns the worker and the recoveries it ran. */
async function withLoad(name: string, fault: (w: TransactionalWorker) => Promise<void>) {
  const recoveries: Recovery[] = [];
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
    hooks: { onRecovery: (info) => recoveries.push(info) },
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
  return { w, recoveries, reconnects: await reconnectAttempts(w) };
}

describe('broker faults under load (1-node cluster)', () => {
  after(async () => {
    for (const id of cluster.nodeIds()) if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  });

  test('the broker stopped (SIGSTOP) longer than the API timeout, then resumed: recovered by reconnecting or a new producer', async (t) => {
    const { w, recoveries, reconnects } = await withLoad('sigstop', async () => {
      const [id] = cluster.nodeIds();
      cluster.pauseNode(id!);
      await new Promise((r) => setTimeout(r, API_TIMEOUT * 2.5));
      cluster.resumeNode(id!);
    });
    const seen = JSON.stringify(recoveries);
    t.diagnostic(`recoveries: ${seen}; reconnect attempts: ${reconnects}`);
    // Calls time out (retriable, deadline passed) or the clients see all brokers down (transport):
    // either way the plan rebuilds the clients, never a rewind that would wait on the same clients.
    const rebuilt = recoveries.filter(
      (r) =>
        (r.kind === 'transport' || r.kind === 'retriable') &&
        (r.action === 'reconnect' || r.action === 'recreate-producer'),
    );
    assert.ok(rebuilt.length >= 1, `a transport or timeout recovery rebuilt the clients: ${seen}`);
    if (recoveries.some((r) => r.action === 'reconnect'))
      assert.ok(reconnects >= 1, `a reconnect plan counts its attempts (${reconnects})`);
    assert.ok(!recoveries.some((r) => r.action === 'stop'), seen);
    assert.equal(w.status().failure, undefined);
    assert.ok(w.status().committedTransactions > 5);
  });

  test('the broker killed -9 and restarted during load', async (t) => {
    let commitsAtRestart = 0;
    const { w, recoveries, reconnects } = await withLoad('brokerkill', async (worker) => {
      const [id] = cluster.nodeIds();
      await cluster.killNode(id!);
      await new Promise((r) => setTimeout(r, 3_000));
      await cluster.startNode(id!);
      commitsAtRestart = worker.status().committedTransactions;
    });
    const seen = JSON.stringify(recoveries);
    t.diagnostic(`recoveries: ${seen}; reconnect attempts: ${reconnects}`);
    // Whether librdkafka rides out a 3 s outage or the worker goes through its reconnect loop depends
    // on timing; what is planned must be a transport-path plan, and it must commit again by itself.
    for (const r of recoveries) {
      assert.notEqual(r.action, 'stop', seen);
      if (r.kind === 'transport') assert.equal(r.action, 'reconnect', seen);
    }
    if (recoveries.some((r) => r.action === 'reconnect'))
      assert.ok(reconnects >= 1, `a reconnect plan counts its attempts (${reconnects})`);
    assert.equal(w.status().failure, undefined);
    assert.ok(
      w.status().committedTransactions > commitsAtRestart,
      'the worker commits again after the restart',
    );
  });
});
