import { createAdmin, type AdminPort } from '../../kafka/admin.ts';
import {
  createAcknowledgedWriter,
  createPartitionReader,
  type AcknowledgedWriter,
  type PartitionReader,
} from '../../kafka/attempt-log.ts';
import type { FetchedRecord, TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import { createLogger, type Logger } from '../../observability/logger.ts';
import type { AttemptStore, DeliveryMarker } from './attempt-store.ts';

export const DEFAULT_ATTEMPT_TOPIC = 'hamstring.delivery-attempts';
/** Segment bounds of the attempt topic: what a start reads beyond the newest marker per key. */
const ATTEMPT_SEGMENT_BYTES = 16 * 1024 * 1024;
const ATTEMPT_SEGMENT_MS = 10 * 60 * 1000;

export interface KafkaAttemptStoreOptions {
  bootstrapServers: string;
  /** Compacted topic holding the markers. Default `hamstring.delivery-attempts`. */
  topic?: string;
  /** Partitions when the topic is created. Default 1: markers are few and small. */
  partitions?: number;
  clientId?: string;
  /** Bound of `get()` catching up with the topic, and of connects and metadata calls. Default 30 s. */
  timeoutMs?: number;
  /** Bound of one acknowledged `put()`. Default 30 s. */
  messageTimeoutMs?: number;
  log?: Logger;
  /** Test seams: the admin port and the Kafka clients. */
  admin?: () => AdminPort;
  writer?: typeof createAcknowledgedWriter;
  reader?: typeof createPartitionReader;
}

/** Key of a marker in the topic: compaction keeps the newest marker per (group, topic, partition). */
export function markerKey(group: string, tp: TopicPartition): string {
  return `${group}|${tp.topic}|${tp.partition}`;
}

/** Parses a marker value; a value that is not a marker (foreign writer) is ignored, not fatal. */
export function parseMarker(value: Buffer): DeliveryMarker | undefined {
  try {
    const v = JSON.parse(value.toString('utf8')) as Partial<DeliveryMarker>;
    if (typeof v.offset !== 'number' || typeof v.count !== 'number') return undefined;
    return {
      offset: v.offset,
      count: v.count,
      ...(typeof v.suspectEnd === 'number' ? { suspectEnd: v.suspectEnd } : {}),
      ...(Array.isArray(v.batchEnds) && v.batchEnds.every((e) => typeof e === 'number')
        ? { batchEnds: v.batchEnds }
        : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Delivery-attempt markers in a compacted Kafka topic, so they survive process restarts and follow
 * a partition to whichever instance owns it next.
 *
 * Why a tailing reader and not a lookup per `get()`: Kafka has no point reads. One non-group
 * consumer assigned to every partition of the topic from the beginning keeps a map of the newest
 * marker per key; `get()` asks the leaders for the high watermarks at call time and waits until the
 * reader has passed them, which makes every write acknowledged before the call (by any process)
 * visible. The cost of a `get()` is one watermark round trip plus the reader's fetch latency; a
 * `put()` is one acknowledged produce (acks=all, idempotent).
 */
export class KafkaAttemptStore implements AttemptStore {
  readonly topic: string;
  readonly #o: KafkaAttemptStoreOptions;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #markers = new Map<string, DeliveryMarker>();
  #writer: AcknowledgedWriter | undefined;
  #reader: PartitionReader | undefined;
  #partitions: number[] = [];
  #tail: Promise<void> | undefined;
  #closed = false;
  #progress: (() => void)[] = [];
  #replacing: Promise<void> | undefined;

  constructor(options: KafkaAttemptStoreOptions) {
    this.#o = options;
    this.topic = options.topic ?? DEFAULT_ATTEMPT_TOPIC;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#log = (options.log ?? createLogger()).child({ component: 'attempt-store', topic: this.topic });
  }

  async start(): Promise<void> {
    if (this.#reader) return;
    const clientId = this.#o.clientId ?? `hamstring-attempts-${process.pid}`;
    const reader = (this.#o.reader ?? createPartitionReader)(
      {
        bootstrapServers: this.#o.bootstrapServers,
        clientId: `${clientId}-reader`,
        isolation: 'read_uncommitted',
        // A marker written ends the broker's wait at once, so get() sees it no later. The wait only
        // paces an idle store, which every stage process keeps: at 50 ms each one cost its broker
        // about 0.9 % of a core in empty fetches (bench:idle, three processes: 7.6-7.8 % -> 4.9-5.2 %).
        fetchWaitMaxMs: 500,
      },
      this.#log,
    );
    const writer = (this.#o.writer ?? createAcknowledgedWriter)(
      {
        bootstrapServers: this.#o.bootstrapServers,
        clientId: `${clientId}-writer`,
        messageTimeoutMs: this.#o.messageTimeoutMs ?? 30_000,
      },
      this.#log,
    );
    try {
      await reader.connect(this.#timeoutMs);
      await this.#ensureTopic(reader);
      const partitions = await reader.partitions(this.topic, this.#timeoutMs);
      if (!partitions) throw new Error(`attempt topic ${this.topic} has no partitions`);
      await writer.connect(this.#timeoutMs);
      reader.assign(partitions.map((partition) => ({ topic: this.topic, partition, offset: -2 })));
      this.#partitions = partitions;
    } catch (e) {
      await Promise.all([reader.close(2_000), writer.close(2_000)]);
      throw e;
    }
    this.#reader = reader;
    this.#writer = writer;
    this.#tail = this.#tailLoop(reader);
  }

  async get(group: string, partitions: readonly TopicPartition[]): Promise<Map<string, DeliveryMarker>> {
    await this.#replaceStrandedClients();
    const reader = this.#started();
    const marks = await this.#writerOrThrow().highWatermarks(this.topic, this.#timeoutMs);
    await this.#caughtUp(reader, marks);
    const out = new Map<string, DeliveryMarker>();
    for (const tp of partitions) {
      const m = this.#markers.get(markerKey(group, tp));
      if (m) out.set(tpKey(tp), { ...m });
    }
    return out;
  }

  async put(
    group: string,
    markers: readonly { partition: TopicPartition; marker: DeliveryMarker }[],
  ): Promise<void> {
    await this.#replaceStrandedClients();
    const writer = this.#writerOrThrow();
    await writer.write(
      markers.map(({ partition, marker }) => ({
        topic: this.topic,
        key: markerKey(group, partition),
        value: JSON.stringify(marker),
      })),
    );
  }

  /** Forgets the markers of these partitions (tombstones; compaction removes the keys). */
  async clear(group: string, partitions: readonly TopicPartition[]): Promise<void> {
    await this.#replaceStrandedClients();
    const writer = this.#writerOrThrow();
    await writer.write(
      partitions.map((tp) => ({ topic: this.topic, key: markerKey(group, tp), value: null })),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#tail;
    await Promise.all([this.#reader?.close(5_000), this.#writer?.close(5_000)]);
    this.#reader = undefined;
    this.#writer = undefined;
    this.#tail = undefined;
  }

  /**
   * A client librdkafka stranded (stranded-client.ts) would fail every call until the process
   * restarts; both are replaced instead, and the new reader reads the topic again from the start.
   */
  async #replaceStrandedClients(): Promise<void> {
    const stranded = () => this.#reader?.stranded() === true || this.#writer?.stranded() === true;
    if (!this.#replacing && !this.#closed && stranded())
      this.#replacing = (async () => {
        this.#log.warn({ event: 'attempt-store-clients-replaced' }, 'attempt store: a client was stranded');
        const [reader, writer, tail] = [this.#reader, this.#writer, this.#tail];
        this.#reader = undefined;
        this.#writer = undefined;
        await tail; // the tail loop ends: its reader is no longer the store's
        await Promise.all([reader?.close(1_000), writer?.close(1_000)]);
        await this.start();
      })().finally(() => {
        this.#replacing = undefined;
      });
    await this.#replacing;
  }

  #started(): PartitionReader {
    if (!this.#reader || this.#closed) throw new Error('KafkaAttemptStore is not started');
    return this.#reader;
  }

  #writerOrThrow(): AcknowledgedWriter {
    this.#started();
    if (!this.#writer) throw new Error('KafkaAttemptStore is not started');
    return this.#writer;
  }

  async #ensureTopic(reader: PartitionReader): Promise<void> {
    if (await reader.partitions(this.topic, this.#timeoutMs)) return;
    const brokers = await reader.brokerCount(this.#timeoutMs);
    const admin = (
      this.#o.admin ?? (() => createAdmin(this.#o.bootstrapServers, 'hamstring-attempts-admin'))
    )();
    try {
      // createTopics treats TOPIC_ALREADY_EXISTS as success: a concurrent start elsewhere is fine.
      await admin.createTopics(
        [
          {
            topic: this.topic,
            partitions: this.#o.partitions ?? 1,
            replicationFactor: Math.min(3, brokers),
            config: {
              'cleanup.policy': 'compact',
              // The log cleaner never touches the active segment, and by default one holds 1 GB or
              // a week: every start would read each marker ever written (a marker per batch and
              // partition) before its first get(). Small, short segments keep that to minutes.
              'segment.bytes': String(ATTEMPT_SEGMENT_BYTES),
              'segment.ms': String(ATTEMPT_SEGMENT_MS),
              'min.insync.replicas': String(Math.min(2, brokers)),
            },
          },
        ],
        this.#timeoutMs,
      );
    } finally {
      admin.close();
    }
    this.#log.info({ event: 'attempt-topic-created', brokers }, 'created the delivery-attempt topic');
    // Metadata of a new topic reaches every broker a little later.
    const deadline = Date.now() + this.#timeoutMs;
    while (!(await reader.partitions(this.topic, this.#timeoutMs))) {
      if (Date.now() > deadline) throw new Error(`attempt topic ${this.topic} did not appear`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async #tailLoop(reader: PartitionReader): Promise<void> {
    while (!this.#closed && this.#reader === reader) {
      try {
        const records = await reader.consume(1_000, 100);
        for (const r of records) this.#apply(r);
      } catch (e) {
        // Transient client errors are retried by librdkafka; a consume error here is logged and the
        // loop goes on, get() is bounded by its own timeout.
        this.#log.warn({ err: e instanceof Error ? e.message : String(e) }, 'attempt store: consume failed');
        await new Promise((r) => setTimeout(r, 200));
      }
      const waiters = this.#progress;
      this.#progress = [];
      for (const w of waiters) w();
    }
    for (const w of this.#progress) w();
  }

  #apply(r: FetchedRecord): void {
    if (r.key === null) return;
    const key = r.key.toString('utf8');
    if (r.value === null) {
      this.#markers.delete(key);
      return;
    }
    const marker = parseMarker(r.value);
    if (marker) this.#markers.set(key, marker);
    else this.#log.warn({ key, offset: r.offset }, 'attempt store: ignoring a value that is not a marker');
  }

  async #caughtUp(reader: PartitionReader, marks: Map<number, number>): Promise<void> {
    const deadline = Date.now() + this.#timeoutMs;
    const behind = () =>
      [...marks].filter(
        ([partition, high]) => (reader.position({ topic: this.topic, partition }) ?? 0) < high,
      );
    for (;;) {
      const lagging = behind();
      if (lagging.length === 0) return;
      if (this.#closed) throw new Error('KafkaAttemptStore closed while reading markers');
      if (Date.now() > deadline) {
        throw new Error(
          `attempt store: reader did not reach the high watermarks of ${this.topic} within ${this.#timeoutMs} ms ` +
            `(behind: ${lagging.map(([p, h]) => `${p}@${reader.position({ topic: this.topic, partition: p }) ?? '?'}<${h}`).join(', ')})`,
        );
      }
      await new Promise<void>((resolve) => this.#progress.push(resolve));
    }
  }

  /** Partitions of the attempt topic (diagnostics, tests). */
  get partitions(): readonly number[] {
    return this.#partitions;
  }
}
