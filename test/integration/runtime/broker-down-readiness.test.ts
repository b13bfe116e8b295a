import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { freePort } from '../../helpers/free-port.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';
import { exited, spawnWorker } from '../../support/spawn-worker.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TransactionalWorker } from '../../../src/runtime/worker/transactional-worker.ts';
import { assertSums, stateWorkers } from '../../support/state-checks.ts';
import { countingStage } from '../../support/state-stages.ts';

let kafka: Awaited<ReturnType<typeof startPrivateKafka>>;
let cluster: LocalKafkaCluster;
const children: ChildProcess[] = [];
const workers: TransactionalWorker[] = [];
const stateRoot = mkdtempSync(join(tmpdir(), 'hamstring-rdy-state-'));
before(async () => {
  // Its own broker: killing the run-wide one would fail the files that run next to this one.
  kafka = await startPrivateKafka('readiness');
  cluster = kafka.cluster;
});
after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  rmSync(stateRoot, { recursive: true, force: true });
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await kafka?.stop();
});

async function readyz(port: number): Promise<{ status: number; notReady: string | undefined }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  const body = (await res.json()) as { workers: { notReady?: string }[] };
  return { status: res.status, notReady: body.workers[0]?.notReady };
}

describe('readiness while the only broker is gone', () => {
  test('/readyz answers 503 naming the broker within 2 s of a kill -9, and 200 again after the restart', async () => {
    const [input, output, group] = [uniqueTopic('rdy-in'), uniqueTopic('rdy-out'), uniqueGroup('rdy')];
    await createTopics(kafka.bootstrap, [input, output], 2);
    await seed(kafka.bootstrap, input, 0, 100);
    const healthPort = await freePort();
    const w = spawnWorker(
      {
        BOOTSTRAP: kafka.bootstrap,
        INPUT: input,
        OUTPUT: output,
        GROUP: group,
        HEALTH_PORT: String(healthPort),
      },
      children,
    );
    let last: Awaited<ReturnType<typeof readyz>> | undefined;
    const observe = () => JSON.stringify(last);
    await waitFor(async () => (last = await readyz(healthPort)).status === 200, {
      timeoutMs: 60_000,
      message: 'ready with the broker up',
      observe,
    });
    const [id] = cluster.nodeIds();
    const killedAt = Date.now();
    await cluster.killNode(id!);
    await waitFor(async () => (last = await readyz(healthPort)).status === 503, {
      timeoutMs: 2_500,
      intervalMs: 50,
      message: 'not ready once the broker is gone',
      observe,
    });
    const notReadyAfterMs = Date.now() - killedAt;
    assert.match(last?.notReady ?? '', new RegExp(`${kafka.bootstrap} unreachable since`), observe());
    // Readiness stays false while the broker is down (no flapping back on a statistics report).
    for (let i = 0; i < 10; i += 1) {
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((last = await readyz(healthPort)).status, 503, observe());
    }
    await cluster.startNode(id!);
    await waitFor(async () => (last = await readyz(healthPort)).status === 200, {
      timeoutMs: 90_000,
      message: 'ready again after the restart',
      observe,
    });
    process.stderr.write(`# not ready ${notReadyAfterMs} ms after the kill\n`);
    w.child.kill('SIGTERM');
    await exited(w.child);
    assert.equal(w.child.exitCode, 0);
  });

  test('a stateful worker started while the only broker is down waits in its reconnect loop, then prepares its store and counts every record once', async () => {
    const [input, output, group] = [
      uniqueTopic('rdy-st-in'),
      uniqueTopic('rdy-st-out'),
      uniqueGroup('rdy-st'),
    ];
    await createTopics(kafka.bootstrap, [input, output], 2);
    await seed(kafka.bootstrap, input, 0, 500);
    const [id] = cluster.nodeIds();
    await cluster.stopNode(id!);
    const worker = stateWorkers(
      () => kafka.bootstrap,
      stateRoot,
      workers,
    )(countingStage(input, output, group), '0');
    const t0 = Date.now();
    await worker.start();
    const startedMs = Date.now() - t0;
    const down = worker.status();
    assert.equal(down.failure, undefined, JSON.stringify(down));
    assert.equal(down.ready, false);
    await waitFor(() => /reconnect/.test(worker.status().notReady ?? ''), {
      timeoutMs: 15_000,
      message: 'a reason naming the reconnect loop',
      observe: () => worker.status().notReady,
    });
    // start() did not wait out a retry bound: it resolved within one API timeout of the first check.
    assert.ok(startedMs < 20_000, `start() took ${startedMs} ms`);
    await cluster.startNode(id!);
    await assertSums(kafka.bootstrap, output, group, 500);
    assert.equal(worker.status().failure, undefined);
  });
});
