import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { checkOutput, isExactlyOnce, type SeenRecord } from '../../../src/verify/check.ts';
import { coordinatorPartition, javaStringHash } from '../../../src/verify/coordinators.ts';
import { readAllCommitted } from '../../../src/verify/reader.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { createTopics } from '../../support/pipeline-harness.ts';

const rec = (partition: number, offset: number, seq: number, attempts: string[] = []): SeenRecord => ({
  partition,
  offset,
  key: `k-${seq % 2}`,
  seq,
  attempts,
});

describe('verify: the output checker', () => {
  test('a clean output of 0..n-1 passes, and a re-read of the same position is not a duplicate', () => {
    const v = checkOutput([rec(0, 0, 0), rec(0, 1, 2), rec(1, 0, 1), rec(1, 1, 3), rec(1, 1, 3)], 4);
    assert.equal(v.received, 4);
    assert.ok(isExactlyOnce(v), JSON.stringify(v));
  });

  test('the same sequence at two offsets is a duplicate, a missing one is lost', () => {
    const v = checkOutput([rec(0, 0, 0), rec(0, 1, 0), rec(1, 0, 1)], 3);
    assert.equal(v.duplicates, 1);
    assert.equal(v.lost, 1);
    assert.deepEqual(v.samples.lost, [2]);
  });

  test('a lower sequence after a higher one of the same key counts as reordered, a duplicate does not', () => {
    const v = checkOutput([rec(0, 0, 2), rec(0, 1, 0), rec(0, 2, 2)], 3);
    assert.equal(v.reordered, 1);
    assert.equal(v.duplicates, 1);
  });

  test('a record of an attempt a worker reported aborted is counted as visible from an aborted transaction', () => {
    const v = checkOutput([rec(0, 0, 0, ['g/w0/1/3']), rec(1, 0, 1, ['g/w0/1/4'])], 2, new Set(['g/w0/1/3']));
    assert.equal(v.abortedVisible, 1);
    assert.equal(isExactlyOnce(v), false);
  });
});

describe('verify: the hanging-transaction check', () => {
  let bootstrap: string;
  before(async () => {
    bootstrap = (await testKafka()).bootstrap;
  });

  test('a read_committed reader does not reach the end of a partition while a transaction is open, and does after the abort', async () => {
    const topic = uniqueTopic('verify-hanging');
    await createTopics(bootstrap, [topic], 1);
    const p = createProducer(
      {
        bootstrapServers: bootstrap,
        clientId: 'verify-hanging',
        transactionalId: uniqueTransactionalId('verify-hanging'),
        transactionTimeoutMs: 60_000,
        messageTimeoutMs: 30_000,
        apiTimeoutMs: 10_000,
      },
      silentLogger(),
    );
    await p.connect(10_000);
    await p.initTransactions();
    await p.beginTransaction();
    await p.produce({ topic, key: 'k-0', value: '0' });
    await p.commitTransaction();
    await p.beginTransaction();
    await p.produce({ topic, key: 'k-0', value: '1' });
    await p.flush(10_000);
    try {
      const open = await readAllCommitted(bootstrap, topic, 1, 8_000);
      assert.equal(open.records.length, 1);
      assert.equal(open.reachedEnd, false, `lag ${open.lagAtEnd}`);
      await p.abortTransaction();
      const closed = await readAllCommitted(bootstrap, topic, 1, 20_000);
      assert.equal(closed.records.length, 1);
      assert.equal(closed.reachedEnd, true, `lag ${closed.lagAtEnd}`);
    } finally {
      await p.close(5_000);
    }
  });
});

describe('verify: coordinator placement', () => {
  test("javaStringHash equals Java's String.hashCode, so the coordinator partition matches Kafka's", () => {
    // Values of "".hashCode(), "a".hashCode(), "hello".hashCode(), "polygenelubricants".hashCode() in Java.
    assert.equal(javaStringHash(''), 0);
    assert.equal(javaStringHash('a'), 97);
    assert.equal(javaStringHash('hello'), 99162322);
    assert.equal(javaStringHash('polygenelubricants'), -2147483648);
    assert.equal(coordinatorPartition('polygenelubricants', 50), 0);
    assert.equal(coordinatorPartition('hello', 10), 2);
  });
});
