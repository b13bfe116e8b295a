import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { TransactionalWorker, type WorkerHooks } from '../../../src/runtime/index.ts';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
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
let privateKafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: its faults would otherwise stall every file running beside it.
before(async () => {
  privateKafka = await startPrivateKafka('reconnect');
  ({ bootstrap, cluster } = privateKafka);
});
after(async () => {
  await privateKafka?.stop();
});

/** A logger that keeps every line, so the test can check what an operator would see. */
function capturingLogger(lines: Record<string, unknown>[]) {
  return pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
}

describe('the reconnect loop through a real outage (1-node cluster)', () => {
  after(async () => {
    for (const id of cluster.nodeIds()) if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  });

  test('with the broker stopped the worker counts and logs reconnect attempts, stays live, and commits again once it is back', async () => {
    const input = uniqueTopic('outage-in');
    const output = uniqueTopic('outage-out');
    const group = uniqueGroup('outage');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 500);
    const lines: Record<string, unknown>[] = [];
    const recoveries: Parameters<NonNullable<WorkerHooks['onRecovery']>>[0][] = [];
    const w = new TransactionalWorker({
      stage: passThroughStage(input, output, group),
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: 3_000 }),
      batch: { size: 20, timeoutMs: 20 },
      log: capturingLogger(lines),
      reconnectBackOff: () => 500,
      hooks: { onRecovery: (info) => recoveries.push(info) },
    });
    const attempts = async () => (await w.metrics.reconnectAttempts.get()).values[0]?.value ?? 0;
    await w.start();
    try {
      await waitFor(() => w.status().committedTransactions > 0, {
        timeoutMs: 60_000,
        message: 'first commit',
      });
      const [id] = cluster.nodeIds();
      await cluster.stopNode(id!);
      // The outage lasts until the loop has visibly failed a few attempts: no fixed sleep.
      await waitFor(async () => (await attempts()) >= 3, {
        timeoutMs: 60_000,
        message: 'reconnect attempts while the broker is down',
        observe: () => JSON.stringify(recoveries),
      });
      const down = w.status();
      assert.equal(down.live, true, 'live while it keeps trying');
      assert.equal(down.ready, false, 'not ready without a consumer');
      assert.equal(down.failure, undefined);
      const commitsDuringOutage = down.committedTransactions;
      await cluster.startNode(id!);
      await seed(bootstrap, input, 500, 500);
      await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_000, timeoutMs: 120_000 });
      const seen = JSON.stringify(recoveries);
      assert.ok(
        recoveries.some(
          // A commit that timed out first recreates the producer; its start then fails and enters the
          // reconnect loop, which the log lines below prove either way.
          (r) =>
            (r.action === 'reconnect' || r.action === 'recreate-producer') &&
            (r.kind === 'transport' || r.kind === 'retriable'),
        ),
        `the outage rebuilt the clients: ${seen}`,
      );
      assert.ok(!recoveries.some((r) => r.action === 'stop'), seen);
      const retrying = lines.filter((l) => l.msg === 'kafka: unreachable, retrying');
      assert.ok(retrying.length >= 2, `each failed attempt is logged (${retrying.length})`);
      assert.ok(
        retrying.every(
          (l, i) => typeof l.attempt === 'number' && (i === 0 || l.attempt !== retrying[i - 1]!.attempt),
        ),
        'log lines name their attempt',
      );
      assert.ok(
        lines.some((l) => l.msg === 'kafka: reconnected'),
        'the reconnect is logged',
      );
      assert.ok(w.status().committedTransactions > commitsDuringOutage, 'progress after the outage');
      assert.equal(w.status().ready, true);
    } finally {
      await w.stop();
    }
  });
});
