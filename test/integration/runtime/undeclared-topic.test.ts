import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker, type Stage, type WorkerHooks } from '../../../src/runtime/index.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { createTopics, readCommitted, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

describe('a stage writing to a topic it did not declare', () => {
  test('stops the worker with a configuration error naming the topic; nothing is written and no offset moves', async () => {
    const [input, declared, stray] = [uniqueTopic('decl-in'), uniqueTopic('decl-out'), uniqueTopic('stray')];
    const group = uniqueGroup('undeclared');
    // The stray topic exists: only the declaration is missing, so the broker would accept the write.
    await createTopics(bootstrap, [input, declared, stray], 1);
    await seed(bootstrap, input, 0, 20);
    const stage: Stage = {
      name: group,
      inputTopics: [input],
      outputTopics: [declared],
      process: (records) => ({ outputs: records.map((r) => ({ topic: stray, key: r.key, value: r.value })) }),
    };
    const recoveries: Parameters<NonNullable<WorkerHooks['onRecovery']>>[0][] = [];
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { groupId: group }),
      batch: { size: 10, timeoutMs: 50 },
      log: silentLogger(),
      hooks: { onRecovery: (info) => recoveries.push(info) },
    });
    await w.start();
    await w.done();
    const s = w.status();
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    // The stage, the topic and what it declared; no librdkafka code that would point at the client.
    assert.equal(
      s.failure,
      `configuration error: stage ${group} produced to undeclared topic ${stray}; its declared outputs (outputTopics) are ${declared}`,
    );
    assert.deepEqual(
      recoveries.map((r) => [r.kind, r.action]),
      [['config', 'stop']],
      JSON.stringify(recoveries),
    );
    assert.equal(s.committedTransactions, 0);
    assert.equal(
      (await readCommitted(bootstrap, stray, 1, 3_000)).length,
      0,
      'nothing reached the stray topic',
    );
    const admin = createAdmin(bootstrap);
    try {
      const committed = await admin.groupOffsets(group, [input]);
      assert.ok(
        committed.every((c) => c.offset < 0),
        `no input offset committed: ${JSON.stringify(committed)}`,
      );
    } finally {
      admin.close();
    }
  });
});
