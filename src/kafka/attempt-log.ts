import Kafka from '@confluentinc/kafka-javascript';
import { toRecord } from './consumer.ts';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { clientDiagnostics, type KafkaClientSettings } from './client-config.ts';
import type { FetchedRecord, OutgoingRecord, TopicPartition, TopicPartitionOffset } from './records.ts';
import { tpKey } from './records.ts';
import { watchForStranding } from './stranded-client.ts';
import { attachDebugLog } from './debug-log.ts';
import { connectionProperties } from './security.ts';

/**
 * A producer whose `write` resolves only once the broker acknowledged every record of the call
 * (idempotent, acks=all): a marker written before a batch is handed to a stage must survive a crash
 * right after. Concurrent writes are independent; each waits for its own delivery reports only.
 */
export interface AcknowledgedWriter extends TopicMetadata {
  connect(timeoutMs: number): Promise<void>;
  /** Resolves when every record is acknowledged; rejects with the first delivery error. */
  write(records: readonly OutgoingRecord[]): Promise<void>;
  /** True once the client forgot every broker (stranded-client.ts): only a new one can continue. */
  stranded(): boolean;
  close(timeoutMs: number): Promise<void>;
}

/**
 * A consumer outside any group: `assign`ed to explicit partitions and positions, for tailing a log
 * (the delivery-attempt topic) or reading a range of a topic (DLT replay dry runs). Positions are
 * tracked from the records consumed and from end-of-partition events, so a reader can tell when it
 * has seen everything below an offset even when the last offsets are transaction markers or were
 * compacted away.
 */
export interface PartitionReader extends TopicMetadata {
  connect(timeoutMs: number): Promise<void>;
  /** Reads these partitions from the given offsets (`-2` = the beginning, `-1` = the end). */
  assign(positions: readonly TopicPartitionOffset[]): void;
  /** Up to `max` records, waiting at most `timeoutMs` for the first. */
  consume(max: number, timeoutMs: number): Promise<FetchedRecord[]>;
  /**
   * Next offset the reader will deliver for a partition, as far as known: last consumed + 1, or the
   * end offset reported when the reader reached the end of the partition. Undefined before either.
   */
  position(tp: TopicPartition): number | undefined;
  /** True once the client forgot every broker (stranded-client.ts): only a new one can continue. */
  stranded(): boolean;
  close(timeoutMs: number): Promise<void>;
}

/**
 * Metadata and watermark queries. Both clients offer them, but a reader's connection is busy with
 * long-poll fetches (the broker answers one request per connection at a time), so latency-critical
 * queries go through the writer.
 */
export interface TopicMetadata {
  /** Partition ids of a topic, from fresh metadata; undefined if the topic does not exist. */
  partitions(topic: string, timeoutMs: number): Promise<number[] | undefined>;
  /** Number of brokers in the cluster (replication factor of topics created by the runtime). */
  brokerCount(timeoutMs: number): Promise<number>;
  /** High watermark of every partition of a topic, asked from the partition leaders now. */
  highWatermarks(topic: string, timeoutMs: number): Promise<Map<number, number>>;
}

export interface ReaderSettings extends KafkaClientSettings {
  isolation: 'read_committed' | 'read_uncommitted';
  /**
   * How long the broker may hold a fetch that finds nothing new (default 50 ms). A new record ends
   * the wait at once; this bounds how late the reader learns it stands at a partition's end
   * (`partition.eof`), and sets how often an idle reader asks.
   */
  fetchWaitMaxMs?: number;
}

type Callback<T> = (err: unknown, v: T) => void;

/** Debug output and the stranded-client watch of one client; returns whether it is stranded. */
function instrument(
  native: Kafka.Producer | Kafka.KafkaConsumer,
  clientId: string,
  what: string,
  log: Logger,
): () => boolean {
  attachDebugLog(native, clientId);
  let stranded = false;
  watchForStranding(native, (reason) => {
    stranded = true;
    log.warn({ client: clientId, reason }, `kafka: ${what} stranded`);
  });
  return () => stranded;
}

function call<T>(op: 'admin' | 'consume' | 'connect', fn: (cb: Callback<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) =>
    fn((err, v) => (err ? reject(classifyKafkaError(err, op)) : resolve(v))),
  );
}

function metadataOf(native: Kafka.Producer | Kafka.KafkaConsumer): TopicMetadata {
  const self: TopicMetadata = {
    async partitions(topic, timeoutMs) {
      const md = await call<Kafka.Metadata>('admin', (cb) => {
        native.getMetadata({ topic, timeout: timeoutMs }, (err, md) => cb(err, md));
      });
      const t = md.topics.find((x) => x.name === topic);
      // Metadata for a missing topic comes back with an error and no partitions.
      if (!t || t.partitions.length === 0) return undefined;
      return t.partitions.map((p) => p.id).sort((a, b) => a - b);
    },
    async brokerCount(timeoutMs) {
      const md = await call<Kafka.Metadata>('admin', (cb) => {
        native.getMetadata({ timeout: timeoutMs }, (err, md) => cb(err, md));
      });
      return md.brokers.length;
    },
    async highWatermarks(topic, timeoutMs) {
      const ids = await self.partitions(topic, timeoutMs);
      if (!ids) throw new Error(`topic ${topic} not found`);
      const marks = await Promise.all(
        ids.map((id) =>
          call<Kafka.WatermarkOffsets>('admin', (cb) => {
            native.queryWatermarkOffsets(topic, id, timeoutMs, (err, w) => cb(err, w));
          }),
        ),
      );
      return new Map(ids.map((id, i) => [id, marks[i]?.highOffset ?? 0]));
    },
  };
  return self;
}

/** How often the writer polls while a write waits for acknowledgements, and otherwise. */
const FAST_POLL_MS = 5;
const IDLE_POLL_MS = 100;

export function createAcknowledgedWriter(
  settings: KafkaClientSettings & { messageTimeoutMs: number },
  log: Logger,
): AcknowledgedWriter {
  const props: Record<string, string | number | boolean> = {
    ...connectionProperties(settings.bootstrapServers, settings.clientId),
    'enable.idempotence': true,
    acks: 'all',
    'message.timeout.ms': settings.messageTimeoutMs,
    // One marker write per batch: latency matters more than batching.
    'linger.ms': 0,
    dr_cb: true,
    // A metadata query must never create the (compacted) attempt topic with broker defaults.
    'allow.auto.create.topics': false,
    'socket.connection.setup.timeout.ms': 10_000,
    'reconnect.backoff.max.ms': 2_000,
    ...clientDiagnostics(),
    ...settings.overrides,
  };
  const native = new Kafka.Producer(props);
  const stranded = instrument(native, settings.clientId, 'attempt-log writer', log);
  let seq = 0;
  const pending = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  // Delivery reports (and the client's statistics and errors) reach JavaScript only when the client
  // is polled: every FAST_POLL_MS while a write waits for its acknowledgements, so that a marker write
  // stays near one round trip, and every IDLE_POLL_MS otherwise. Polled every 5 ms throughout, the
  // writer took a third of an idle stage's event-loop time (200 timer calls a second).
  let fastPoll: NodeJS.Timeout | undefined;
  const pollNow = () => {
    try {
      native.poll();
    } catch {
      // Not connected (closing): nothing to deliver.
    }
  };
  const slowDownWhenIdle = () => {
    if (pending.size > 0 || !fastPoll) return;
    clearInterval(fastPoll);
    fastPoll = undefined;
  };
  native.on('delivery-report', (err, report) => {
    const id = report.opaque as number;
    const waiter = pending.get(id);
    if (!waiter) return;
    pending.delete(id);
    slowDownWhenIdle();
    if (!err) waiter.resolve();
    else {
      const e = classifyKafkaError(err, 'delivery');
      // A refused write names this topic, not the worker's outputs (refusal.ts reads the record).
      // Only then: a record on other kinds would attribute the failure to an input record.
      waiter.reject(
        e.kind === 'authorization'
          ? e.about(
              { topic: report.topic, partition: report.partition, index: 0, bytes: report.size },
              `writing to topic ${report.topic}`,
            )
          : e,
      );
    }
  });
  native.on('event.error', (e) => {
    log.debug({ err: classifyKafkaError(e, 'client').toLog() }, 'kafka: attempt-log writer client error');
  });
  const toBuf = (v: Buffer | string | null | undefined): Buffer | null =>
    v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v);
  let closed = false;

  return {
    ...metadataOf(native),
    connect: (timeoutMs) =>
      call<void>('connect', (cb) => {
        native.connect({ timeout: timeoutMs }, (err) => cb(err, undefined));
        native.setPollInterval(IDLE_POLL_MS);
      }),
    stranded,
    async write(records) {
      const acks: Promise<void>[] = [];
      for (const r of records) {
        seq += 1;
        const id = seq;
        acks.push(
          new Promise<void>((resolve, reject) => {
            pending.set(id, { resolve, reject });
          }),
        );
        try {
          const headers = r.headers
            ? Object.entries(r.headers).map(([k, v]) => ({ [k]: toBuf(v) as Buffer }))
            : undefined;
          native.produce(
            r.topic,
            r.partition ?? null,
            toBuf(r.value),
            toBuf(r.key),
            r.timestamp ?? null,
            id,
            headers,
          );
        } catch (e) {
          pending.delete(id);
          slowDownWhenIdle();
          void acks.pop()?.catch(() => undefined);
          await Promise.allSettled(acks);
          throw classifyKafkaError(e, 'produce');
        }
      }
      if (pending.size > 0) fastPoll ??= setInterval(pollNow, FAST_POLL_MS).unref();
      const results = await Promise.allSettled(acks);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    close(timeoutMs) {
      if (closed) return Promise.resolve();
      closed = true;
      clearInterval(fastPoll);
      fastPoll = undefined;
      // See disconnectWithin in producer.ts: a poll racing the disconnect aborts the process.
      native.setPollInterval(0);
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        native.disconnect(timeoutMs, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

interface EofEvent {
  topic: string;
  partition: number;
  offset: number;
}

export function createPartitionReader(settings: ReaderSettings, log: Logger): PartitionReader {
  const native = new Kafka.KafkaConsumer(
    {
      ...connectionProperties(settings.bootstrapServers, settings.clientId),
      // librdkafka requires a group id even for assign(); nothing is ever committed under it.
      'group.id': `${settings.clientId}.unused`,
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': settings.isolation,
      'enable.partition.eof': true,
      // A position below the log start (retention, compaction) reads from the start, never skips.
      'auto.offset.reset': 'earliest',
      'fetch.wait.max.ms': settings.fetchWaitMaxMs ?? 50,
      'allow.auto.create.topics': false,
      'socket.connection.setup.timeout.ms': 10_000,
      'reconnect.backoff.max.ms': 2_000,
      ...clientDiagnostics(),
      ...settings.overrides,
    },
    {},
  );
  // Its partitions are assigned with explicit offsets (no OffsetFetch), so only the broker check.
  const stranded = instrument(native, settings.clientId, 'partition reader', log);
  // Return as soon as something arrived instead of waiting the whole timeout for `max` records:
  // a tailing reader must hand over each write at fetch latency.
  (
    native as unknown as { setDefaultIsTimeoutOnlyForFirstMessage(v: boolean): void }
  ).setDefaultIsTimeoutOnlyForFirstMessage(true);
  const positions = new Map<string, number>();
  native.on('partition.eof', (e: EofEvent) => {
    const k = tpKey(e);
    if ((positions.get(k) ?? -1) < e.offset) positions.set(k, e.offset);
  });
  native.on('event.error', (e) => {
    log.debug({ err: classifyKafkaError(e, 'client').toLog() }, 'kafka: partition reader client error');
  });
  let closed = false;

  return {
    connect: (timeoutMs) =>
      call<void>('connect', (cb) => {
        native.connect({ timeout: timeoutMs }, (err) => cb(err, undefined));
      }),
    assign(list) {
      try {
        native.assign(list.map(({ topic, partition, offset }) => ({ topic, partition, offset })));
      } catch (e) {
        throw classifyKafkaError(e, 'consume');
      }
    },
    async consume(max, timeoutMs) {
      native.setDefaultConsumeTimeout(timeoutMs);
      const msgs = await call<Kafka.Message[]>('consume', (cb) => native.consume(max, cb));
      return msgs.map((m): FetchedRecord => {
        const k = tpKey(m);
        if ((positions.get(k) ?? -1) < m.offset + 1) positions.set(k, m.offset + 1);
        return toRecord(m);
      });
    },
    position: (tp) => positions.get(tpKey(tp)),
    stranded,
    ...metadataOf(native),
    close(timeoutMs) {
      if (closed) return Promise.resolve();
      closed = true;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        native.disconnect(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
