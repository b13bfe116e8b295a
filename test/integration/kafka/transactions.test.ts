import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createConsumer } from '../../../src/kafka/consumer.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { createTopics, readCommitted, seed } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

describe('Kafka transactions through the adapter (real 1-node broker)', () => {
  test('outputs and consumer offsets commit together; an aborted transaction is invisible; committed offset = last consumed + 1', async () => {
    const input = uniqueTopic('txn-in');
    const output = uniqueTopic('txn-out');
    const group = uniqueGroup('txn');
    await createTopics(bootstrap, [input, output], 1);
    await seed(bootstrap, input, 0, 20);
    const log = silentLogger();
    const consumer = createConsumer(
      testConsumerSettings(bootstrap, 'txn-test', group),
      { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
      () => undefined,
      log,
    );
    const producer = createProducer(
      {
        bootstrapServers: bootstrap,
        clientId: 'txn-test-producer',
        transactionalId: uniqueTransactionalId('txn'),
        transactionTimeoutMs: 30_000,
        messageTimeoutMs: 20_000,
        apiTimeoutMs: 20_000,
      },
      log,
    );
    await consumer.connect(20_000);
    consumer.subscribe([input]);
    await producer.connect(20_000);
    await producer.initTransactions();
    const consumed: FetchedRecord[] = [];
    const deadline = Date.now() + 30_000;
    while (consumed.length < 20 && Date.now() < deadline) consumed.push(...(await consumer.consume(20, 500)));
    assert.equal(consumed.length, 20);
    const first = consumed.slice(0, 10);
    const second = consumed.slice(10);

    await producer.beginTransaction();
    for (const r of first)
      await producer.produce({ topic: output, key: r.key, value: `committed-${r.value?.toString()}` });
    await producer.sendOffsets([{ topic: input, partition: 0, offset: first.at(-1)!.offset + 1 }], consumer);
    await producer.commitTransaction();

    await producer.beginTransaction();
    for (const r of second)
      await producer.produce({ topic: output, key: r.key, value: `aborted-${r.value?.toString()}` });
    await producer.sendOffsets([{ topic: input, partition: 0, offset: second.at(-1)!.offset + 1 }], consumer);
    await producer.abortTransaction();

    const visible = await readCommitted(bootstrap, output, 10, 30_000);
    assert.deepEqual(
      visible.map((r) => r.value?.toString()),
      first.map((r) => `committed-${r.value?.toString()}`),
      'read_committed sees exactly the committed records, none of the aborted transaction',
    );
    const admin = createAdmin(bootstrap);
    try {
      const offsets = await admin.groupOffsets(group, [input]);
      assert.equal(
        offsets[0]?.offset,
        first.at(-1)!.offset + 1,
        'the committed offset is the last consumed + 1',
      );
    } finally {
      admin.close();
      await producer.close(10_000);
      await consumer.close(10_000);
    }
  });

  test('an abort right after a commit, while the coordinator still writes its markers, aborts instead of failing the producer', async () => {
    const output = uniqueTopic('txn-abort-after-commit');
    await createTopics(bootstrap, [output], 2);
    const producer = createProducer(
      {
        bootstrapServers: bootstrap,
        clientId: 'txn-abort-after-commit',
        transactionalId: uniqueTransactionalId('txn-aac'),
        transactionTimeoutMs: 30_000,
        messageTimeoutMs: 20_000,
        apiTimeoutMs: 10_000,
      },
      silentLogger(),
    );
    await producer.connect(20_000);
    await producer.initTransactions();
    try {
      // Each abort's records register partitions while the commit before is still completing (the
      // coordinator answers CONCURRENT_TRANSACTIONS): the race that ended such aborts fatally.
      const rounds = 30;
      for (let i = 0; i < rounds; i++) {
        await producer.beginTransaction();
        await producer.produce({ topic: output, partition: i % 2, key: `k${i}`, value: `committed-${i}` });
        await producer.commitTransaction();
        await producer.beginTransaction();
        for (let j = 0; j < 20; j++)
          await producer.produce({ topic: output, partition: j % 2, key: `a${j}`, value: `aborted-${i}` });
        // The window is a few milliseconds wide and moves with load: each round aborts a little later.
        await new Promise((r) => setTimeout(r, i % 10));
        await producer.abortTransaction();
      }
      const visible = await readCommitted(bootstrap, output, rounds, 30_000);
      assert.deepEqual(
        visible.map((r) => r.value?.toString()).sort(),
        Array.from({ length: rounds }, (_, i) => `committed-${i}`).sort(),
        'every commit is visible and no aborted record is',
      );
    } finally {
      await producer.close(10_000);
    }
  });
});
