import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { code } from '../../../../src/kafka/error-codes.ts';
import { silentLogger } from '../../../../src/observability/logger.ts';
import { TransactionalWorker } from '../../../../src/runtime/index.ts';
import { FAKE_KAFKA_OPTIONS } from '../../../support/fake-worker.ts';
import { FakeAdmin, FakeClock, FakeKafka, FakeTopic, raw } from '../../../support/worker-fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-prepare-'));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * A worker with one store whose admin calls fail `failures` times with `fault`: metadata reads only
 * (`on: 'watermarks'`, a leader election) or every call (`on: 'all'`, Kafka unreachable).
 */
function workerWithStore(
  failures: number,
  fault: () => Error,
  on: 'watermarks' | 'all' = 'watermarks',
  topics = ['in', 'out'],
) {
  const kafka = new FakeKafka(new FakeTopic('in', 0), ['out']);
  const clock = new FakeClock();
  let calls = 0;
  const failing =
    <T>(fn: () => Promise<T>) =>
    (): Promise<T> =>
      calls++ < failures ? Promise.reject(fault()) : fn();
  const clients = {
    ...kafka.clients(),
    admin: () => {
      const admin = new FakeAdmin(topics);
      admin.watermarks = failing(admin.watermarks.bind(admin));
      if (on === 'all') admin.listTopics = failing(admin.listTopics.bind(admin));
      return admin;
    },
  };
  const worker = new TransactionalWorker({
    stage: {
      name: 'test.stateful',
      inputTopics: ['in'],
      outputTopics: ['out'],
      stores: { counts: {} },
      process: () => ({ outputs: [] }),
    },
    instanceId: '0',
    mode: 'exactly-once',
    batch: { size: 10, timeoutMs: 10 },
    kafka: FAKE_KAFKA_OPTIONS,
    state: { dir: root, replicationFactor: 1 },
    clients,
    attemptStore: false,
    clock,
    log: silentLogger(),
  });
  return { worker, kafka, clock, calls: () => calls };
}

type Started = ReturnType<typeof workerWithStore>;

/** Runs `op`, moving the fake clock on while it sleeps (between attempts of the reconnect loop). */
async function drive(w: Started, op: () => Promise<void>): Promise<void> {
  let done = false;
  const running = op().finally(() => (done = true));
  for (let i = 0; i < 400 && !done; i += 1) {
    await new Promise((r) => setImmediate(r));
    w.clock.advance(500);
  }
  await running;
}

describe('preparing the state stores at start', () => {
  it('rides out a leader election (NOT_LEADER_FOR_PARTITION on a metadata read) in the reconnect loop', async () => {
    const w = workerWithStore(3, () =>
      raw(code('NOT_LEADER_FOR_PARTITION'), 'Broker: Not leader for partition'),
    );
    await drive(w, () => w.worker.start({ loop: false }));
    assert.equal(w.calls(), 1, 'start() resolves after the first failed read, without waiting');
    assert.equal(w.kafka.producers.length, 0, 'no client before the store is prepared');
    await drive(w, () => w.worker.step());
    assert.equal(w.worker.status().failure, undefined);
    assert.equal(w.calls(), 4, 'three failed reads, then the one that worked');
    assert.equal(w.kafka.producers.length, 1, 'the clients start once the store is prepared');
    assert.equal(w.kafka.consumers.length, 1);
    await w.worker.stop();
  });

  it('stops at once, naming the error, when the start plan says stop (an authorization error)', async () => {
    const w = workerWithStore(100, () =>
      raw(code('TOPIC_AUTHORIZATION_FAILED'), 'Broker: Topic authorization failed'),
    );
    await drive(w, () => w.worker.start({ loop: false }));
    assert.match(w.worker.status().failure ?? '', /authoriz/i);
    assert.equal(w.calls(), 1, 'not retried');
    await w.worker.stop();
  });

  it('with Kafka unreachable, start() resolves, the worker says it is reconnecting, and prepares its store once Kafka answers', async () => {
    const w = workerWithStore(6, () => raw(code('_TRANSPORT'), 'Local: Broker transport failure'), 'all');
    await drive(w, () => w.worker.start({ loop: false }));
    const before = w.worker.status();
    assert.equal(before.failure, undefined, 'not failed: Kafka may come back');
    assert.equal(before.ready, false);
    assert.equal(w.calls(), 1);
    const stepping = w.worker.step();
    for (let i = 0; i < 400 && w.calls() < 3; i += 1) {
      await new Promise((r) => setImmediate(r));
      w.clock.advance(100);
    }
    const during = w.worker.status().notReady ?? '';
    await drive(w, () => stepping);
    assert.match(during, /reconnect/i, `while Kafka is away the reason says so: ${during}`);
    assert.equal(w.worker.status().failure, undefined);
    assert.ok(w.calls() > 6, `six failed calls, then those that worked (${w.calls()} in all)`);
    assert.equal(w.kafka.producers.length, 1);
    await w.worker.stop();
  });

  it('a configuration error the deferred checks find (a missing input topic) stops the worker naming it', async () => {
    const w = workerWithStore(2, () => raw(code('_TRANSPORT'), 'Local: Broker transport failure'), 'all', [
      'out',
    ]);
    await drive(w, () => w.worker.start({ loop: false }));
    assert.equal(w.worker.status().failure, undefined);
    await drive(w, () => w.worker.step());
    assert.match(w.worker.status().failure ?? '', /input topic\(s\) in of stage test\.stateful do not exist/);
    assert.equal(w.kafka.producers.length, 0, 'no client was started');
    await w.worker.stop();
  });
});
