import type { AdminPort } from '../../src/kafka/admin.ts';
import { code } from '../../src/kafka/error-codes.ts';
import type { ConsumerPort, RebalanceListener } from '../../src/kafka/consumer.ts';
import type { KafkaError } from '../../src/kafka/kafka-error.ts';
import type { DeliveryTally, ProducerPort } from '../../src/kafka/producer.ts';
import type {
  FetchedRecord,
  OutgoingRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../../src/kafka/records.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import type { KafkaClientFactory } from '../../src/runtime/worker-options.ts';

/**
 * In-memory Kafka ports for driving the worker's loop one step at a time. They model only what the
 * loop's decisions depend on (an assignment, positions, committed offsets, call outcomes); the
 * guarantees themselves are proven against a real broker in test/integration/.
 */

/** A clock whose sleeps end only when the test advances time (or their signal aborts). */
export class FakeClock implements Clock {
  #now = 1_000_000;
  #sleepers: { until: number; resolve: () => void }[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper = { until: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          resolve();
        },
        { once: true },
      );
    });
  }

  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due) s.resolve();
  }
}

/** A failure a fake call throws: an error shaped like the binding's (`LibrdKafkaError`) or a classified one. */
export type Fault = Error;

/** One partition log shared by every consumer the worker creates (they are members of one group). */
export class FakeTopic {
  readonly records: FetchedRecord[] = [];
  committed = 0;

  constructor(
    readonly topic: string,
    count: number,
  ) {
    for (let offset = 0; offset < count; offset += 1)
      this.records.push({
        topic,
        partition: 0,
        offset,
        key: Buffer.from(`k${offset}`),
        value: Buffer.from(`v${offset}`),
        headers: {},
        timestamp: 0,
      });
  }
}

export class FakeConsumer implements ConsumerPort {
  readonly native = {};
  readonly memberDescription = 'fake';
  closed = false;
  seeks: TopicPartitionOffset[] = [];
  /** Thrown by the next `consume` call. */
  consumeFault: Fault | undefined;
  #position = 0;
  #assigned = false;

  constructor(
    private readonly topic: FakeTopic,
    private readonly listener: RebalanceListener,
    readonly reportError: (err: KafkaError) => void,
  ) {}

  connect(): Promise<void> {
    return Promise.resolve();
  }
  subscribe(): void {}
  assign(): void {}
  consume(max: number): Promise<FetchedRecord[]> {
    if (this.consumeFault) {
      const fault = this.consumeFault;
      this.consumeFault = undefined;
      return Promise.reject(fault);
    }
    if (!this.#assigned) {
      this.#assigned = true;
      this.#position = this.topic.committed;
      this.listener.onAssign([{ topic: this.topic.topic, partition: 0 }]);
    }
    const batch = this.topic.records.slice(this.#position, this.#position + max);
    this.#position += batch.length;
    return Promise.resolve(batch);
  }
  assignment(): TopicPartition[] {
    return this.#assigned ? [{ topic: this.topic.topic, partition: 0 }] : [];
  }
  pause(): void {}
  resume(): void {}
  /** What committed() reports instead of the topic's committed offset (a coordinator that lost it). */
  reportedCommitted: number | undefined;
  committed(partitions: TopicPartition[]): Promise<TopicPartitionOffset[]> {
    const offset = this.reportedCommitted ?? this.topic.committed;
    return Promise.resolve(partitions.map((tp) => ({ ...tp, offset })));
  }
  /** The client moves its position by itself (an offset reset), as no call of the worker did. */
  resetPosition(offset: number): void {
    this.#position = offset;
  }
  seek(position: TopicPartitionOffset): Promise<void> {
    this.seeks.push(position);
    this.#position = position.offset;
    return Promise.resolve();
  }
  commitOffsets(offsets: TopicPartitionOffset[]): Promise<void> {
    for (const o of offsets) this.topic.committed = o.offset;
    return Promise.resolve();
  }
  lag(): number | undefined {
    return this.topic.records.length - this.#position;
  }
  atEnd(): boolean {
    return this.#position >= this.topic.records.length;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/**
 * The coordinator's view of transactional ids: the producer that initialised an id last is its
 * current one; an older one is fenced (as a broker bumps the producer epoch), and the transaction
 * it had open is aborted.
 */
export class FakeCoordinator {
  readonly #current = new Map<string, FakeProducer>();

  claim(producer: FakeProducer): void {
    const previous = this.#current.get(producer.transactionalId);
    if (previous && previous !== producer) previous.fence();
    this.#current.set(producer.transactionalId, producer);
  }
}

/** librdkafka's fatal error of a producer a newer instance fenced. */
const FENCED = code('_FENCED');

export class FakeProducer implements ProducerPort {
  closed = false;
  produced: OutgoingRecord[] = [];
  committedOutputs: OutgoingRecord[] = [];
  /** Delivery reports that failed, as the tally reports them (a real broker's refusals). */
  deliveryErrors: KafkaError[] = [];
  /** Faults thrown by the named calls (each once). */
  faults: Partial<Record<'connect' | 'sendOffsets' | 'commitTransaction' | 'abortTransaction', Fault>> = {};
  #pendingOffsets: TopicPartitionOffset[] = [];
  #fenced = false;

  constructor(
    private readonly topic: FakeTopic,
    readonly transactionalId = 'fake-txn',
    private readonly coordinator = new FakeCoordinator(),
  ) {}

  /** A newer producer took the id: the open transaction is aborted, every later call fails fatally. */
  fence(): void {
    this.#fenced = true;
    this.produced = [];
    this.#pendingOffsets = [];
  }

  #fault(call: keyof FakeProducer['faults']): Promise<void> {
    if (this.#fenced && call !== 'connect')
      return Promise.reject(raw(FENCED, 'Producer fenced by newer instance', { isFatal: true }));
    const fault = this.faults[call];
    if (fault === undefined) return Promise.resolve();
    delete this.faults[call];
    return Promise.reject(fault);
  }
  connect(): Promise<void> {
    return this.#fault('connect');
  }
  initTransactions(): Promise<void> {
    this.coordinator.claim(this);
    return Promise.resolve();
  }
  beginTransaction(): Promise<void> {
    this.produced = [];
    this.#pendingOffsets = [];
    return Promise.resolve();
  }
  produce(record: OutgoingRecord): Promise<void> {
    this.produced.push(record);
    return Promise.resolve();
  }
  async sendOffsets(offsets: TopicPartitionOffset[]): Promise<void> {
    await this.#fault('sendOffsets');
    this.#pendingOffsets = offsets;
  }
  async commitTransaction(): Promise<void> {
    await this.#fault('commitTransaction');
    this.committedOutputs.push(...this.produced);
    for (const o of this.#pendingOffsets) this.topic.committed = o.offset;
    this.produced = [];
    this.#pendingOffsets = [];
  }
  async abortTransaction(): Promise<void> {
    this.produced = [];
    this.#pendingOffsets = [];
    await this.#fault('abortTransaction');
  }
  /**
   * Delivery errors whose reports reach the tally only at the next flush, as librdkafka's reports
   * reach JavaScript only on a poll (a commit can fail before they arrive).
   */
  lateDeliveryErrors: KafkaError[] = [];
  flush(): Promise<void> {
    this.deliveryErrors.push(...this.lateDeliveryErrors.splice(0));
    return Promise.resolve();
  }
  tally(): DeliveryTally & { firstError?: KafkaError; refused: KafkaError[] } {
    // A fake record is delivered once produced, unless a test made it fail.
    const n = this.produced.length;
    const failed = Math.min(n, this.deliveryErrors.length);
    const first = this.deliveryErrors[0];
    return {
      produced: n,
      delivered: n - failed,
      purged: 0,
      failed,
      refused: this.deliveryErrors.filter((e) => e.kind === 'refused'),
      ...(first === undefined ? {} : { firstError: first }),
    };
  }
  deliveredOffsets(): ReadonlyMap<string, number> {
    return new Map();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

export class FakeAdmin implements AdminPort {
  closed = false;
  constructor(private readonly topics: string[]) {}
  createTopics(): Promise<void> {
    return Promise.resolve();
  }
  deleteTopics(): Promise<void> {
    return Promise.resolve();
  }
  listTopics(): Promise<string[]> {
    return Promise.resolve(this.topics);
  }
  describeGroup(groupId: string): Promise<{ groupId: string; state: string; members: [] }> {
    return Promise.resolve({ groupId, state: 'Stable', members: [] });
  }
  groupOffsets(): Promise<TopicPartitionOffset[]> {
    return Promise.resolve([]);
  }
  watermarks(): Promise<{ partition: number; low: number; high: number }[]> {
    return Promise.resolve([{ partition: 0, low: 0, high: 0 }]);
  }
  createPartitions(): Promise<void> {
    return Promise.resolve();
  }
  partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    return Promise.resolve(new Map(topics.filter((t) => this.topics.includes(t)).map((t) => [t, 1])));
  }
  close(): void {
    this.closed = true;
  }
}

/** The client factory of one fake cluster; every client the worker creates is recorded in order. */
export class FakeKafka {
  readonly consumers: FakeConsumer[] = [];
  readonly producers: FakeProducer[] = [];
  /** Faults for the next producers, in creation order (applied when the producer is created). */
  readonly nextProducerFaults: FakeProducer['faults'][] = [];
  readonly coordinator = new FakeCoordinator();

  /** `others`: further topics the cluster has (the stage's outputs), for the start-up checks. */
  constructor(
    readonly topic: FakeTopic,
    readonly others: readonly string[] = [],
  ) {}

  clients(): KafkaClientFactory {
    return {
      consumer: (_settings, listener, onError) => {
        const c = new FakeConsumer(this.topic, listener, onError);
        this.consumers.push(c);
        return c;
      },
      producer: (settings) => {
        const p = new FakeProducer(this.topic, settings.transactionalId, this.coordinator);
        p.faults = this.nextProducerFaults.shift() ?? {};
        this.producers.push(p);
        return p;
      },
      admin: () => new FakeAdmin([this.topic.topic, ...this.others]),
    };
  }
}

/** An error as the binding throws it: an Error with librdkafka's code and flags. */
export function raw(
  codeValue: number,
  message: string,
  flags: { isRetriable?: boolean; isTxnRequiresAbort?: boolean; isFatal?: boolean } = {},
): Fault {
  return Object.assign(new Error(message), { code: codeValue, ...flags });
}
