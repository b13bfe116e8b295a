import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { createReadCommittedReader } from '../../../src/kafka/read-committed-reader.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { createTopics, passThroughStage, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** Produces one record with value `value` to an explicit partition. */
async function produceTo(topic: string, partition: number, value: string): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'new-partitions',
      transactionTimeoutMs: 30_000,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 10_000,
    },
    silentLogger(),
  );
  await p.connect(10_000);
  await p.produce({ topic, partition, value });
  await p.flush(20_000);
  const t = p.tally();
  await p.close(5_000);
  // flush() returns when librdkafka is done; the delivery report may reach JavaScript later.
  assert.equal(t.failed, 0, `record to ${topic}/${partition} not delivered: ${t.firstError?.message}`);
}

describe('partitions added to an input topic while the worker runs (real 1-node broker)', () => {
  test('are assigned and consumed within 15 s (metadata refresh of a few seconds, not 300 s)', async () => {
    const [input, out] = [uniqueTopic('grow-in'), uniqueTopic('grow-out')];
    await createTopics(bootstrap, [input, out], 1);
    const worker = new TransactionalWorker({
      stage: passThroughStage(input, out),
      instanceId: 'w0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { groupId: uniqueGroup('grow') }),
      batch: { size: 10, timeoutMs: 100 },
      log: silentLogger(),
    });
    await worker.start();
    const reader = createReadCommittedReader({ bootstrap, clientId: 'grow-reader' });
    try {
      await produceTo(input, 0, 'old-0');
      await reader.connect(10_000);
      reader.subscribe([out]);
      const seen = new Set<string>();
      const waitFor = async (values: string[], ms: number) => {
        const deadline = Date.now() + ms;
        while (Date.now() < deadline && !values.every((v) => seen.has(v)))
          for (const r of await reader.consume(100, 200)) seen.add(r.value?.toString() ?? '');
        return values.filter((v) => !seen.has(v));
      };
      assert.deepEqual(await waitFor(['old-0'], 30_000), [], 'the worker runs before the topic grows');

      const admin = createAdmin(bootstrap);
      await admin.createPartitions(input, 3);
      admin.close();
      const t0 = Date.now();
      await produceTo(input, 1, 'new-1');
      await produceTo(input, 2, 'new-2');
      const missing = await waitFor(['new-1', 'new-2'], 15_000 - (Date.now() - t0));
      assert.deepEqual(missing, [], `records of the new partitions not output within 15 s of adding them`);
      assert.ok(worker.status().assigned.includes(`${input}:2`));
    } finally {
      await reader.close(5_000);
      await worker.stop();
    }
  });
});
