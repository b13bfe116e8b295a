import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createConsumer, type RebalanceListener } from '../../../src/kafka/consumer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/**
 * Subscribes a consumer whose rebalance listener holds `payload`, waits for its assignment (the
 * rebalance callback ran), closes it, and returns a weak reference to the listener only.
 */
async function closedConsumerListener(topic: string): Promise<WeakRef<RebalanceListener>> {
  let assigned = false;
  const payload = new Array<number>(1_000_000).fill(7);
  const listener: RebalanceListener & { payload: number[] } = {
    payload,
    onAssign: () => {
      assigned = true;
    },
    onRevoke: () => undefined,
    onLost: () => undefined,
  };
  const consumer = createConsumer(
    testConsumerSettings(bootstrap, 'release-test', `release-${topic}`),
    listener,
    () => undefined,
    silentLogger(),
  );
  await consumer.connect(10_000);
  consumer.subscribe([topic]);
  const deadline = Date.now() + 30_000;
  while (!assigned && Date.now() < deadline) await consumer.consume(10, 200);
  assert.ok(assigned, 'the consumer was assigned its partition (the rebalance callback ran)');
  await consumer.close(10_000);
  return new WeakRef(listener);
}

describe('a closed consumer lets go of what its callbacks refer to (real 1-node broker)', () => {
  test('after close, the rebalance listener (and all it holds) is garbage-collected', async () => {
    const topic = uniqueTopic('release');
    const admin = createAdmin(bootstrap);
    await admin.createTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
    admin.close();
    const ref = await closedConsumerListener(topic);
    // The binding runs configureCallbacks(false) in its disconnect callback; give it the turn.
    for (let i = 0; i < 20 && ref.deref() !== undefined; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      gc();
    }
    assert.equal(ref.deref(), undefined, "the closed consumer's rebalance callback still holds its listener");
  });
});
