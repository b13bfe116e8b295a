import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyKafkaError } from '../../src/kafka/classify.ts';
import type { ConsumerPort } from '../../src/kafka/consumer.ts';
import type { ProducerPort } from '../../src/kafka/producer.ts';
import type { FetchedRecord } from '../../src/kafka/records.ts';

/**
 * The transactional behaviour the worker's loop relies on, written once and run twice: against the
 * fake clients of test/support/worker-fakes.ts (test/unit/kafka/fake-conformance.test.ts) and
 * against the real adapter of src/kafka/ on a real broker
 * (test/integration/kafka/adapter-conformance.test.ts). The step-by-step worker tests on fakes
 * prove something about Kafka only as far as the fakes behave like it; this is where they must.
 */

/** One input topic (one partition, `records` records `v0`...) and one output topic, fresh. */
export interface ConformanceWorld {
  readonly input: string;
  readonly output: string;
  /** A producer with this transactional id, connected, its transactions initialised. */
  producer(transactionalId: string): Promise<ProducerPort>;
  /** A member of the world's one group, subscribed to the input. */
  consumer(): Promise<ConsumerPort>;
  /**
   * The output's values as a read_committed reader sees them, in order, read until `last` (a value
   * committed after everything the caller wants to know about): what is not there by then never
   * will be.
   */
  committedValues(last: string): Promise<string[]>;
  /** The group's committed position on the input's partition, undefined when it has none. */
  groupPosition(): Promise<number | undefined>;
  /** A transactional id no other world uses. */
  transactionalId(): string;
  close(): Promise<void>;
}

export interface ConformanceBackend {
  readonly name: string;
  world(records: number): Promise<ConformanceWorld>;
}

async function consumeAtLeast(consumer: ConsumerPort, n: number): Promise<FetchedRecord[]> {
  const out: FetchedRecord[] = [];
  const deadline = Date.now() + 30_000;
  while (out.length < n && Date.now() < deadline) out.push(...(await consumer.consume(n - out.length, 500)));
  assert.ok(out.length >= n, `consumed ${out.length} of ${n} input records within 30 s`);
  return out;
}

async function inWorld(
  backend: ConformanceBackend,
  records: number,
  body: (w: ConformanceWorld) => Promise<void>,
) {
  const world = await backend.world(records);
  try {
    await body(world);
  } finally {
    await world.close();
  }
}

/** Registers the conformance tests for `backend`. */
export function kafkaConformance(backend: ConformanceBackend): void {
  describe(`Kafka transactional behaviour the worker relies on (${backend.name})`, () => {
    test('records produced in a committed transaction are visible to read_committed, in order', () =>
      inWorld(backend, 0, async (w) => {
        const p = await w.producer(w.transactionalId());
        await p.beginTransaction();
        for (const value of ['a', 'b', 'c']) await p.produce({ topic: w.output, key: 'k', value });
        await p.commitTransaction();
        assert.deepEqual(await w.committedValues('c'), ['a', 'b', 'c']);
      }));

    test('records of an aborted transaction are never visible; the producer goes on with the next one', () =>
      inWorld(backend, 0, async (w) => {
        const p = await w.producer(w.transactionalId());
        await p.beginTransaction();
        for (const value of ['x1', 'x2']) await p.produce({ topic: w.output, key: 'k', value });
        await p.abortTransaction();
        await p.beginTransaction();
        await p.produce({ topic: w.output, key: 'k', value: 'after' });
        await p.commitTransaction();
        assert.deepEqual(await w.committedValues('after'), ['after']);
      }));

    test("offsets sent in a committed transaction become the group's position; in an aborted one they do not", () =>
      inWorld(backend, 10, async (w) => {
        const consumer = await w.consumer();
        const p = await w.producer(w.transactionalId());
        const consumed = await consumeAtLeast(consumer, 10);
        const next = (i: number) => (consumed[i]?.offset ?? -1) + 1;
        await p.beginTransaction();
        await p.produce({ topic: w.output, key: 'k', value: 'first' });
        await p.sendOffsets([{ topic: w.input, partition: 0, offset: next(3) }], consumer);
        await p.commitTransaction();
        assert.equal(await w.groupPosition(), next(3), 'committed with the transaction');

        await p.beginTransaction();
        await p.produce({ topic: w.output, key: 'k', value: 'aborted' });
        await p.sendOffsets([{ topic: w.input, partition: 0, offset: next(9) }], consumer);
        await p.abortTransaction();
        assert.equal(await w.groupPosition(), next(3), 'the aborted transaction moved nothing');
        assert.deepEqual(
          (await consumer.committed([{ topic: w.input, partition: 0 }], 10_000)).map((o) => o.offset),
          [next(3)],
          'the consumer reads the same committed position',
        );

        await p.beginTransaction();
        await p.produce({ topic: w.output, key: 'k', value: 'last' });
        await p.commitTransaction();
        assert.deepEqual(await w.committedValues('last'), ['first', 'last']);
        assert.equal(
          await w.groupPosition(),
          next(3),
          'the aborted offsets stay discarded after a later commit',
        );
        await consumer.close(10_000);
      }));

    test('a second producer with the same transactional id fences the first: its open transaction is lost, its commit fails as fenced', () =>
      inWorld(backend, 0, async (w) => {
        const id = w.transactionalId();
        const zombie = await w.producer(id);
        await zombie.beginTransaction();
        await zombie.produce({ topic: w.output, key: 'k', value: 'zombie' });
        const successor = await w.producer(id);
        const failed = await zombie.commitTransaction().then(
          () => undefined,
          (err: unknown) => err,
        );
        assert.ok(failed !== undefined, "the fenced producer's commit failed");
        const kind = classifyKafkaError(failed, 'commit-transaction');
        assert.equal(kind.kind, 'fenced', kind.message);
        await successor.beginTransaction();
        await successor.produce({ topic: w.output, key: 'k', value: 'successor' });
        await successor.commitTransaction();
        assert.deepEqual(await w.committedValues('successor'), ['successor']);
      }));
  });
}
