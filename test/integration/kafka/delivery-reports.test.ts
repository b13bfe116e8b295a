import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

async function plainProducerOn(name: string) {
  const topic = uniqueTopic(name);
  const admin = createAdmin(bootstrap);
  await admin.createTopics([{ topic, partitions: 3, replicationFactor: 1 }]);
  admin.close();
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: name,
      transactionTimeoutMs: 20_000,
      messageTimeoutMs: 10_000,
      apiTimeoutMs: 10_000,
    },
    silentLogger(),
  );
  await producer.connect(10_000);
  return { topic, producer };
}

const RECORDS = 5_000;

describe('delivery reports reach the tally before flush and close return (real 1-node broker)', () => {
  test('flush() returns with every record counted as delivered, without waiting for a poll', async () => {
    const { topic, producer } = await plainProducerOn('flush-reports');
    try {
      for (let i = 0; i < RECORDS; i += 1) await producer.produce({ topic, key: `k${i}`, value: `v${i}` });
      await producer.flush(20_000);
      // Read at once: a report still queued in the binding would leave `delivered` short.
      const t = producer.tally();
      assert.equal(t.produced, RECORDS);
      assert.equal(t.delivered, RECORDS);
      assert.equal(t.failed, 0);
    } finally {
      await producer.close(10_000);
    }
  });

  test('close() right after producing first hands over the reports of the records in flight', async () => {
    const { topic, producer } = await plainProducerOn('close-reports');
    for (let i = 0; i < RECORDS; i += 1) await producer.produce({ topic, key: `k${i}`, value: `v${i}` });
    await producer.close(10_000);
    // Each report releases the handle that kept its record's opaque alive; one dropped at disconnect
    // never would. Counted here, every one of them ran.
    const t = producer.tally();
    assert.equal(t.produced, RECORDS);
    assert.equal(t.delivered, RECORDS);
  });
});
