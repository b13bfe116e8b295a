import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { KafkaError } from '../../../src/kafka/kafka-error.ts';
import { createProducer, type ProducerPort } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { culprits, type Produced } from '../../../src/runtime/record-errors/refused-outputs.ts';
import { uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/**
 * A fresh one-partition topic with `topicConfig` and a transactional producer (initialised) for the
 * body, closed after it.
 */
async function withProducer(
  name: string,
  topicConfig: Record<string, string>,
  body: (producer: ProducerPort, topic: string) => Promise<void>,
  overrides: Record<string, number> = {},
): Promise<void> {
  const topic = uniqueTopic(name);
  const admin = createAdmin(bootstrap);
  await admin.createTopics([{ topic, partitions: 1, replicationFactor: 1, config: topicConfig }]);
  admin.close();
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: name,
      transactionalId: uniqueTransactionalId(name),
      transactionTimeoutMs: 20_000,
      messageTimeoutMs: 10_000,
      apiTimeoutMs: 10_000,
      overrides,
    },
    silentLogger(),
  );
  await producer.connect(10_000);
  await producer.initTransactions();
  try {
    await body(producer, topic);
  } finally {
    await producer.close(5_000);
  }
}

describe('records Kafka refuses are reported as refused, naming the record (real 1-node broker)', () => {
  test("a record over the topic's max.message.bytes: the delivery report names topic, partition and index", async () => {
    await withProducer('small-limit', { 'max.message.bytes': '2000' }, async (producer, topic) => {
      await producer.beginTransaction();
      await producer.produce({ topic, key: 'a', value: 'fits' });
      await producer.produce({ topic, key: 'b', value: Buffer.alloc(5_000, 'x') });
      await producer.produce({ topic, key: 'c', value: 'fits too' });
      const commit = await producer.commitTransaction().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(commit instanceof KafkaError, 'the commit fails');
      assert.equal(commit.kind, 'refused', `commit failed with ${commit.codeName} (${commit.kind})`);
      await producer.flush(10_000);
      // The broker checks the size of a whole record batch: the records that shared the oversized
      // one's request are refused with it, so each refused record names itself and its size, and
      // the runtime tells the culprit from its neighbours by producing suspects alone.
      const refused = producer.tally().refused;
      assert.ok(refused.length >= 1);
      for (const r of refused) {
        assert.equal(r.codeName, 'MSG_SIZE_TOO_LARGE');
        assert.equal(r.record?.topic, topic);
        assert.equal(r.record?.partition, 0);
      }
      const big = refused.find((r) => r.record?.index === 1);
      assert.deepEqual(big?.record, { topic, partition: 0, index: 1, bytes: 5_001 });
      assert.match(
        big.message,
        new RegExp(
          `${topic}/0 \\(5001 bytes; it or a record batched with it exceeds the topic's max.message.bytes\\)`,
        ),
      );
      await producer.abortTransaction();
    });
  });

  test("a record over the producer's message.max.bytes: produce throws a refused error naming topic and limit", async () => {
    await withProducer(
      'client-limit',
      {},
      async (producer, topic) => {
        await producer.beginTransaction();
        await producer.produce({ topic, value: 'fits' });
        const err = await producer.produce({ topic, value: Buffer.alloc(20_000) }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof KafkaError);
        assert.equal(err.kind, 'refused');
        assert.equal(err.record?.topic, topic);
        assert.equal(err.record?.index, 1);
        assert.match(err.message, /larger than the producer's message.max.bytes \(10000\)/);
        // The refusal leaves the transaction usable: the rest commits.
        await producer.commitTransaction();
        // The committed record's report reaches JavaScript on the binding's poll, after the commit
        // may have returned (CI saw 0 here): flush waits for it.
        await producer.flush(10_000);
        assert.equal(producer.tally().delivered, 1);
      },
      { 'message.max.bytes': 10_000 },
    );
  });

  test('an invalid record (null key to a compacted topic) is refused with its whole batch; the probe finds it', async () => {
    await withProducer('probe-invalid', { 'cleanup.policy': 'compact' }, async (producer, topic) => {
      const produced: Produced[] = [
        { output: { topic, key: 'a', value: 'keyed' } },
        { output: { topic, key: null, value: 'no key' } },
        { output: { topic, key: 'c', value: 'keyed too' } },
      ];
      await producer.beginTransaction();
      for (const p of produced) await producer.produce(p.output);
      await producer.commitTransaction().catch(() => undefined);
      await producer.flush(10_000);
      const refused = producer.tally().refused;
      await producer.abortTransaction();
      assert.ok(refused.length > 1, 'the client reports the records batched with the invalid one as refused');
      for (const r of refused) assert.equal(r.codeName, 'INVALID_RECORD');
      const own = await culprits(producer, refused, produced, 10_000);
      assert.deepEqual(
        own.map((e) => e.record?.index),
        [1],
      );
    });
  });

  test('the probe tells the oversized record from the records batched with it', async () => {
    await withProducer('probe-limit', { 'max.message.bytes': '2000' }, async (producer, topic) => {
      const produced: Produced[] = ['fits', 'x'.repeat(5_000), 'fits too'].map((value) => ({
        output: { topic, value },
      }));
      await producer.beginTransaction();
      for (const p of produced) await producer.produce(p.output);
      await producer.commitTransaction().catch(() => undefined);
      await producer.flush(10_000);
      const refused = producer.tally().refused;
      await producer.abortTransaction();
      assert.ok(refused.length > 1, 'the neighbours were refused with the oversized record');
      const own = await culprits(producer, refused, produced, 10_000);
      assert.deepEqual(
        own.map((e) => e.record?.index),
        [1],
      );
    });
  });
});
