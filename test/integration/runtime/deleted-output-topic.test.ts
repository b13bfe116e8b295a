import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  createTopics,
  passThroughStage,
  readCommitted,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

describe('an output topic deleted while the worker runs (real 1-node broker)', () => {
  test('stops the worker with a reason naming the topic, instead of looping', async () => {
    const [input, out] = [uniqueTopic('del-in'), uniqueTopic('del-out')];
    await createTopics(bootstrap, [input, out], 1);
    const worker = new TransactionalWorker({
      stage: passThroughStage(input, out),
      instanceId: 'w0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { groupId: uniqueGroup('del'), metadataRefreshIntervalMs: 1_000 }),
      batch: { size: 10, timeoutMs: 100 },
      log: silentLogger(),
    });
    await worker.start();
    try {
      await seed(bootstrap, input, 0, 5);
      assert.equal((await readCommitted(bootstrap, out, 5, 30_000)).length, 5);
      const admin = createAdmin(bootstrap);
      await admin.deleteTopics([out]);
      admin.close();
      await seed(bootstrap, input, 5, 5);
      await waitFor(() => worker.status().state === 'failed', {
        timeoutMs: 60_000,
        message: 'the worker stops',
        observe: () => worker.status(),
      });
      assert.match(worker.status().failure ?? '', new RegExp(out));
    } finally {
      await worker.stop();
    }
  });
});
