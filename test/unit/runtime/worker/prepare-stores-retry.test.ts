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

/** A worker with one store whose admin fails its first `failures` metadata reads with `fault`. */
function workerWithStore(failures: number, fault: () => Error) {
  const kafka = new FakeKafka(new FakeTopic('in', 0), ['out']);
  const clock = new FakeClock();
  let reads = 0;
  const clients = {
    ...kafka.clients(),
    admin: () => {
      const admin = new FakeAdmin(['in', 'out']);
      const read = admin.watermarks.bind(admin);
      admin.watermarks = () => (reads++ < failures ? Promise.reject(fault()) : read());
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
  return { worker, clock, reads: () => reads };
}

/** Starts the worker, moving the fake clock on while the start sleeps between attempts. */
async function start(w: ReturnType<typeof workerWithStore>): Promise<void> {
  let done = false;
  const started = w.worker.start({ loop: false }).finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i += 1) {
    await new Promise((r) => setImmediate(r));
    w.clock.advance(500);
  }
  await started;
}

describe('preparing the state stores at start', () => {
  it('rides out a leader election (NOT_LEADER_FOR_PARTITION on a metadata read) and starts', async () => {
    const w = workerWithStore(3, () =>
      raw(code('NOT_LEADER_FOR_PARTITION'), 'Broker: Not leader for partition'),
    );
    await start(w);
    assert.equal(w.worker.status().failure, undefined);
    assert.equal(w.reads(), 4, 'three failed reads, then the one that worked');
    await w.worker.stop();
  });

  it('stops at once, naming the error, when the start plan says stop (an authorization error)', async () => {
    const w = workerWithStore(100, () =>
      raw(code('TOPIC_AUTHORIZATION_FAILED'), 'Broker: Topic authorization failed'),
    );
    await start(w);
    assert.match(w.worker.status().failure ?? '', /authoriz/i);
    assert.equal(w.reads(), 1, 'not retried');
    await w.worker.stop();
  });
});
