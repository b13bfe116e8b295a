import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createConsumer } from '../../../src/kafka/consumer.ts';
import { createProducer, type ProducerPort } from '../../../src/kafka/producer.ts';
import type { ProducerProtocolStats } from '../../../src/kafka/producer-protocol-stats.ts';
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

/** The first statistics report (every 2 s) that satisfies `ready`. */
async function protocolStats(
  producer: ProducerPort,
  ready: (s: ProducerProtocolStats) => boolean,
): Promise<ProducerProtocolStats> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const s = producer.protocolStats?.();
    if (s && ready(s)) return s;
    if (Date.now() > deadline) throw new Error(`no statistics report as awaited; last: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const count = (s: ProducerProtocolStats, api: string): number => s.requests[api] ?? 0;

/**
 * Three consume-transform-produce transactions of 10 records (outputs over 3 partitions, offsets
 * sent), then a fourth that is aborted; returns the producer's protocol figures before and after.
 */
async function fourTransactions(version: 1 | 2) {
  const input = uniqueTopic(`txv${version}-in`);
  const output = uniqueTopic(`txv${version}-out`);
  const group = uniqueGroup(`txv${version}`);
  await createTopics(bootstrap, [input], 1);
  await createTopics(bootstrap, [output], 3);
  await seed(bootstrap, input, 0, 40);
  const log = silentLogger();
  const consumer = createConsumer(
    testConsumerSettings(bootstrap, `txv${version}`, group),
    { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
    () => undefined,
    log,
  );
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: `txv${version}-producer`,
      transactionalId: uniqueTransactionalId(`txv${version}`),
      transactionTimeoutMs: 30_000,
      transactionVersion: version,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 20_000,
    },
    log,
  );
  const admin = createAdmin(bootstrap);
  try {
    await consumer.connect(20_000);
    consumer.subscribe([input]);
    await producer.connect(20_000);
    await producer.initTransactions();
    const before = await protocolStats(producer, (s) => s.producerId >= 0);
    const consumed: FetchedRecord[] = [];
    const deadline = Date.now() + 30_000;
    while (consumed.length < 40 && Date.now() < deadline) consumed.push(...(await consumer.consume(40, 500)));
    assert.equal(consumed.length, 40);
    for (let t = 0; t < 4; t++) {
      const batch = consumed.slice(t * 10, t * 10 + 10);
      const outcome = t < 3 ? 'committed' : 'aborted';
      await producer.beginTransaction();
      for (const [i, r] of batch.entries())
        await producer.produce({
          topic: output,
          partition: i % 3,
          key: r.key,
          value: `${outcome}-${r.value?.toString()}`,
        });
      await producer.sendOffsets(
        [{ topic: input, partition: 0, offset: batch.at(-1)!.offset + 1 }],
        consumer,
      );
      if (t < 3) await producer.commitTransaction();
      else await producer.abortTransaction();
    }
    const after = await protocolStats(producer, (s) => count(s, 'EndTxn') >= 4);
    const visible = await readCommitted(bootstrap, output, 30, 30_000);
    const offsets = await admin.groupOffsets(group, [input]);
    return { consumed, before, after, visible, committedOffset: offsets[0]?.offset };
  } finally {
    admin.close();
    await producer.close(10_000);
    await consumer.close(10_000);
  }
}

function assertExactlyOnce(run: Awaited<ReturnType<typeof fourTransactions>>): void {
  assert.deepEqual(
    run.visible.map((r) => r.value?.toString()).sort(),
    run.consumed
      .slice(0, 30)
      .map((r) => `committed-${r.value?.toString()}`)
      .sort(),
    'read_committed sees the three committed transactions once each and nothing of the aborted one',
  );
  assert.equal(
    run.committedOffset,
    run.consumed[29]!.offset + 1,
    'the group commit is the third transaction’s',
  );
}

describe('transaction protocol versions against a real Kafka 4.1 broker', () => {
  test('version 2: no AddPartitionsToTxn or AddOffsetsToTxn, the epoch moves at every transaction end, records and offsets commit exactly once', async () => {
    const run = await fourTransactions(2);
    assertExactlyOnce(run);
    assert.equal(count(run.after, 'AddPartitionsToTxn'), 0, 'the leaders added the partitions');
    assert.equal(count(run.after, 'AddOffsetsToTxn'), 0, 'the group coordinator added the group');
    assert.ok(count(run.after, 'TxnOffsetCommit') >= 4, 'offsets were sent in all four transactions');
    assert.equal(run.after.producerId, run.before.producerId);
    assert.equal(
      run.after.producerEpoch,
      run.before.producerEpoch + 4,
      'each of the three commits and the abort bumped the epoch',
    );
  });

  test('version 1 (transaction_version: 1) still works: the partitions and the group are added by request, the epoch stays', async () => {
    const run = await fourTransactions(1);
    assertExactlyOnce(run);
    assert.ok(count(run.after, 'AddPartitionsToTxn') >= 4, 'each transaction added its partitions');
    // More when the coordinator, still writing the previous commit's markers, asks for a retry.
    assert.ok(count(run.after, 'AddOffsetsToTxn') >= 4, 'each transaction added the group by request');
    assert.equal(run.after.producerEpoch, run.before.producerEpoch, 'version 1 keeps the epoch');
  });
});
