import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdminPort, TopicSpec } from '../../../src/kafka/admin.ts';
import type { AcknowledgedWriter, PartitionReader } from '../../../src/kafka/attempt-log.ts';
import type { FetchedRecord, OutgoingRecord, TopicPartition } from '../../../src/kafka/records.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import type { AttemptStore } from '../../../src/runtime/delivery-attempts/attempt-store.ts';
import { InMemoryAttemptStore } from '../../../src/runtime/delivery-attempts/in-memory-attempt-store.ts';
import {
  KafkaAttemptStore,
  markerKey,
  parseMarker,
} from '../../../src/runtime/delivery-attempts/kafka-attempt-store.ts';

/** A topic in memory: the writer appends, the reader delivers what was appended (when allowed). */
class FakeLog {
  readonly records: OutgoingRecord[] = [];
  exists = false;
  brokers = 1;
  created: TopicSpec[] = [];
  /** While false the reader delivers nothing (a slow fetch). */
  flowing = true;
  failWrites = false;
  /** consume() calls of every reader so far: a reader that polled has had its chance to answer. */
  polls = 0;
  /** Clients made so far; those made up to `strandedUpTo` report themselves stranded. */
  clients = 0;
  strandedUpTo = 0;

  /** Every client made so far is stranded (librdkafka forgot its brokers); new ones are fine. */
  strandAll(): void {
    this.strandedUpTo = this.clients;
  }

  writer(): AcknowledgedWriter {
    const made = (this.clients += 1);
    return {
      stranded: () => made <= this.strandedUpTo,
      connect: () => Promise.resolve(),
      write: (records) => {
        if (this.failWrites) return Promise.reject(new Error('delivery failed'));
        this.records.push(...records);
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
      ...this.metadata(),
    };
  }

  reader(): PartitionReader {
    let next = 0;
    let assigned = false;
    const made = (this.clients += 1);
    return {
      stranded: () => made <= this.strandedUpTo,
      connect: () => Promise.resolve(),
      assign: () => {
        assigned = true;
      },
      consume: async (max, timeoutMs) => {
        await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 5)));
        this.polls += 1;
        if (!assigned || !this.flowing) return [];
        const out = this.records.slice(next, next + max).map((r, i): FetchedRecord => ({
          topic: r.topic,
          partition: 0,
          offset: next + i,
          key: r.key === undefined || r.key === null ? null : Buffer.from(r.key),
          value: r.value === null ? null : Buffer.from(r.value),
          headers: {},
          timestamp: undefined,
        }));
        next += out.length;
        return out;
      },
      position: () => next,
      close: () => Promise.resolve(),
      ...this.metadata(),
    };
  }

  admin(): AdminPort {
    return {
      createTopics: (topics) => {
        this.created.push(...topics);
        this.exists = true;
        return Promise.resolve();
      },
      close: () => undefined,
    } as Partial<AdminPort> as AdminPort;
  }

  private metadata() {
    return {
      partitions: () => Promise.resolve(this.exists ? [0] : undefined),
      brokerCount: () => Promise.resolve(this.brokers),
      highWatermarks: () => Promise.resolve(new Map([[0, this.records.length]])),
    };
  }
}

function kafkaStore(log: FakeLog, over: { timeoutMs?: number } = {}): KafkaAttemptStore {
  return new KafkaAttemptStore({
    bootstrapServers: 'fake:9092',
    log: silentLogger(),
    admin: () => log.admin(),
    writer: () => log.writer(),
    reader: () => log.reader(),
    ...over,
  });
}

const tp = (topic: string, partition: number): TopicPartition => ({ topic, partition });

/** The AttemptStore contract, run against the in-memory store and the Kafka store over a fake log. */
function contract(name: string, make: () => { a: AttemptStore; b: AttemptStore }): void {
  describe(`${name} honours the AttemptStore contract`, () => {
    it('returns no marker for a partition never put', async () => {
      const { a } = make();
      await a.start();
      assert.equal((await a.get('g', [tp('t', 0)])).size, 0);
      await a.close();
    });

    it('returns the latest marker per partition, keyed topic:partition, per group', async () => {
      const { a, b } = make();
      await a.start();
      await b.start();
      await a.put('g', [
        { partition: tp('t', 0), marker: { offset: 1, count: 1 } },
        { partition: tp('t', 1), marker: { offset: 9, count: 1 } },
      ]);
      await a.put('g', [{ partition: tp('t', 0), marker: { offset: 1, count: 2, suspectEnd: 4 } }]);
      await a.put('other', [{ partition: tp('t', 0), marker: { offset: 7, count: 5 } }]);
      const got = await b.get('g', [tp('t', 0), tp('t', 1), tp('t', 2)]);
      assert.deepEqual(Object.fromEntries(got), {
        't:0': { offset: 1, count: 2, suspectEnd: 4 },
        't:1': { offset: 9, count: 1 },
      });
      await a.close();
      await b.close();
    });
  });
}

contract('InMemoryAttemptStore', () => {
  const s = new InMemoryAttemptStore();
  return { a: s, b: s };
});
contract('KafkaAttemptStore', () => {
  const log = new FakeLog();
  return { a: kafkaStore(log), b: kafkaStore(log) };
});

describe('KafkaAttemptStore', () => {
  it('creates a missing topic compacted, replication min(3, brokers), min.insync min(2, brokers)', async () => {
    const log = new FakeLog();
    log.brokers = 5;
    const s = kafkaStore(log);
    await s.start();
    assert.deepEqual(log.created, [
      {
        topic: 'hamstring.delivery-attempts',
        partitions: 1,
        replicationFactor: 3,
        config: {
          'cleanup.policy': 'compact',
          'min.insync.replicas': '2',
          'segment.bytes': String(16 * 1024 * 1024),
          'segment.ms': String(10 * 60 * 1000),
        },
      },
    ]);
    await s.close();
  });

  it('does not create a topic that exists', async () => {
    const log = new FakeLog();
    log.exists = true;
    const s = kafkaStore(log);
    await s.start();
    assert.deepEqual(log.created, []);
    await s.close();
  });

  it('writes key group|topic|partition and a JSON marker; clear() writes tombstones', async () => {
    const log = new FakeLog();
    const s = kafkaStore(log);
    await s.start();
    await s.put('g', [{ partition: tp('in', 2), marker: { offset: 5, count: 1 } }]);
    await s.clear('g', [tp('in', 2)]);
    assert.deepEqual(
      log.records.map((r) => [r.key, r.value]),
      [
        ['g|in|2', '{"offset":5,"count":1}'],
        ['g|in|2', null],
      ],
    );
    assert.equal((await s.get('g', [tp('in', 2)])).size, 0);
    await s.close();
  });

  it('get() waits until the reader passed the high watermark seen at call time', async () => {
    const log = new FakeLog();
    const s = kafkaStore(log);
    await s.start();
    log.flowing = false;
    await s.put('g', [{ partition: tp('in', 0), marker: { offset: 5, count: 1 } }]);
    let done = false;
    const pending = s.get('g', [tp('in', 0)]).then((m) => {
      done = true;
      return m;
    });
    const polled = log.polls;
    await waitFor(() => log.polls >= polled + 5, {
      timeoutMs: 5_000,
      message: 'the reader polled five more times with nothing new',
    });
    assert.equal(done, false, 'get() must not answer from a reader that is behind');
    log.flowing = true;
    assert.deepEqual((await pending).get('in:0'), { offset: 5, count: 1 });
    await s.close();
  });

  it('get() fails after its timeout when the reader cannot catch up', async () => {
    const log = new FakeLog();
    const s = kafkaStore(log, { timeoutMs: 100 });
    await s.start();
    log.flowing = false;
    await s.put('g', [{ partition: tp('in', 0), marker: { offset: 5, count: 1 } }]);
    await assert.rejects(s.get('g', [tp('in', 0)]), /did not reach the high watermarks/);
    await s.close();
  });

  it('put() rejects when the broker did not acknowledge', async () => {
    const log = new FakeLog();
    const s = kafkaStore(log);
    await s.start();
    log.failWrites = true;
    await assert.rejects(
      s.put('g', [{ partition: tp('in', 0), marker: { offset: 1, count: 1 } }]),
      /delivery failed/,
    );
    await s.close();
  });

  it('hands out copies: mutating a returned marker changes nothing stored', async () => {
    const a = kafkaStore(new FakeLog());
    await a.start();
    await a.put('g', [{ partition: tp('t', 0), marker: { offset: 1, count: 1 } }]);
    const m = (await a.get('g', [tp('t', 0)])).get('t:0')!;
    m.count = 99;
    assert.equal((await a.get('g', [tp('t', 0)])).get('t:0')?.count, 1);
    await a.close();
  });

  it('replaces stranded clients before the next call and keeps every marker', async () => {
    const log = new FakeLog();
    const s = kafkaStore(log);
    await s.start();
    await s.put('g', [{ partition: tp('t', 0), marker: { offset: 3, count: 2 } }]);
    assert.equal(log.clients, 2);
    log.strandAll();
    const [a, b] = await Promise.all([s.get('g', [tp('t', 0)]), s.get('g', [tp('t', 0)])]);
    assert.equal(log.clients, 4, 'one new reader and one new writer, even for concurrent calls');
    assert.deepEqual(a.get('t:0'), { offset: 3, count: 2 });
    assert.deepEqual(b.get('t:0'), { offset: 3, count: 2 });
    await s.put('g', [{ partition: tp('t', 0), marker: { offset: 5, count: 1 } }]);
    assert.deepEqual((await s.get('g', [tp('t', 0)])).get('t:0'), { offset: 5, count: 1 });
    assert.equal(log.clients, 4);
    await s.close();
  });

  it('rejects calls before start()', async () => {
    const s = kafkaStore(new FakeLog());
    await assert.rejects(s.get('g', [tp('in', 0)]), /not started/);
    await assert.rejects(s.put('g', []), /not started/);
  });
});

describe('marker encoding', () => {
  it('markerKey is group|topic|partition', () => {
    assert.equal(
      markerKey('data_analysis.detector', tp('pipeline-x', 7)),
      'data_analysis.detector|pipeline-x|7',
    );
  });

  it('parseMarker keeps offset, count, suspectEnd and batchEnds, and ignores foreign values', () => {
    assert.deepEqual(parseMarker(Buffer.from('{"offset":3,"count":2,"suspectEnd":8,"x":1}')), {
      offset: 3,
      count: 2,
      suspectEnd: 8,
    });
    assert.deepEqual(parseMarker(Buffer.from('{"offset":3,"count":2}')), { offset: 3, count: 2 });
    assert.deepEqual(parseMarker(Buffer.from('{"offset":3,"count":2,"batchEnds":[9,7]}')), {
      offset: 3,
      count: 2,
      batchEnds: [9, 7],
    });
    assert.deepEqual(parseMarker(Buffer.from('{"offset":3,"count":2,"batchEnds":[9,"x"]}')), {
      offset: 3,
      count: 2,
    });
    assert.equal(parseMarker(Buffer.from('not json')), undefined);
    assert.equal(parseMarker(Buffer.from('{"offset":"3","count":2}')), undefined);
  });
});
