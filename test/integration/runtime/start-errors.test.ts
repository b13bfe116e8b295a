import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { createTopics, passThroughStage, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

describe('errors when a worker starts (real broker)', () => {
  test('a bad producer property stops the worker with a reason naming it, not a reconnect loop', async () => {
    const [input, out] = [uniqueTopic('bad-prop-in'), uniqueTopic('bad-prop-out')];
    await createTopics(bootstrap, [input, out], 1);
    const worker = new TransactionalWorker({
      stage: passThroughStage(input, out),
      instanceId: 'w0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, {
        groupId: uniqueGroup('bad-prop'),
        producerOverrides: { 'message.max.bytes': 'not-a-number' },
      }),
      batch: { size: 10, timeoutMs: 100 },
      log: silentLogger(),
    });
    await worker.start();
    await worker.done();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(s.failure ?? '', /message\.max\.bytes/);
    assert.equal((await worker.metrics.reconnectAttempts.get()).values[0]?.value ?? 0, 0);
  });

  test('an unreachable bootstrap address keeps retrying visibly and stays live', async () => {
    const [input, out] = [uniqueTopic('unreachable-in'), uniqueTopic('unreachable-out')];
    const worker = new TransactionalWorker({
      stage: passThroughStage(input, out),
      instanceId: 'w0',
      mode: 'exactly-once',
      // Port 9 (discard) on localhost: nothing listens, every connection is refused.
      kafka: {
        ...testKafkaOptions('127.0.0.1:9', { groupId: uniqueGroup('unreachable') }),
        apiTimeoutMs: 2_000,
      },
      batch: { size: 10, timeoutMs: 100 },
      log: silentLogger(),
      reconnectBackOff: () => 200,
    });
    await worker.start();
    const deadline = Date.now() + 30_000;
    while (
      ((await worker.metrics.reconnectAttempts.get()).values[0]?.value ?? 0) < 2 &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 200));
    const s = worker.status();
    assert.notEqual(s.state, 'failed');
    assert.equal(s.live, true);
    assert.equal(s.failure, undefined);
    assert.ok(
      ((await worker.metrics.reconnectAttempts.get()).values[0]?.value ?? 0) >= 2,
      'reconnect attempts',
    );
    await worker.stop();
  });
});
