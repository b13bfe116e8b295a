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

describe('a stage whose input topic does not exist', () => {
  test('fails at start with a configuration error naming the topic, instead of sitting unassigned', async () => {
    const [present, missing, out] = [uniqueTopic('present'), uniqueTopic('typo'), uniqueTopic('out')];
    await createTopics(bootstrap, [present, out], 1);
    const stage = { ...passThroughStage(present, out), inputTopics: [present, missing] };
    const worker = new TransactionalWorker({
      stage,
      instanceId: 'w0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { groupId: uniqueGroup('missing') }),
      batch: { size: 10, timeoutMs: 100 },
      log: silentLogger(),
    });
    const t0 = Date.now();
    await worker.start();
    await worker.done();
    const s = worker.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.equal(s.ready, false);
    assert.match(s.failure ?? '', new RegExp(`configuration error: input topic\\(s\\) ${missing} `));
    assert.doesNotMatch(s.failure ?? '', new RegExp(present));
    // The grace period for metadata propagation is bounded (10 s), not a wait for the topic.
    assert.ok(Date.now() - t0 < 30_000);
  });
});
