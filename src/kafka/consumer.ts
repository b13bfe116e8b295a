import Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { consumerProperties, type ConsumerSettings } from './client-config.ts';
import { abandon, release } from './abandoned-clients.ts';
import { AssignedPartitions } from './assigned-partitions.ts';
import { attachDebugLog } from './debug-log.ts';
import { strandedError, watchForStranding } from './stranded-client.ts';
import { ConnectionWatch, type ConnectionProblem } from './connection-watch.ts';
import type { KafkaError } from './kafka-error.ts';
import { rebalanceHandler, toTp, type NativeConsumer, type RebalanceListener } from './consumer-rebalance.ts';
import {
  OFFSET_INVALID,
  type FetchedRecord,
  type TopicPartition,
  type TopicPartitionOffset,
} from './records.ts';
import { watchCredentials } from './refusal.ts';

export type { RebalanceListener } from './consumer-rebalance.ts';

/** Opaque consumer handle the transactional producer needs for send-offsets (group metadata). */
export interface GroupMetadataSource {
  readonly native: unknown;
}

/**
 * A group consumer with manual offsets. One instance per group membership: after a membership or
 * transport error the runtime closes it and creates a fresh one (docs/recovery.md, "Actions and steps").
 */
export interface ConsumerPort extends GroupMetadataSource {
  connect(timeoutMs: number): Promise<void>;
  subscribe(topics: string[]): void;
  /**
   * Adds these partitions, read from these offsets (offset < 0: the beginning), to what the client
   * reads without joining the group: a reader that no coordinator can stall.
   */
  assign(partitions: TopicPartitionOffset[]): void;
  /** Up to `max` records, waiting at most `timeoutMs`; also serves rebalance callbacks and errors. */
  consume(max: number, timeoutMs: number): Promise<FetchedRecord[]>;
  assignment(): TopicPartition[];
  pause(partitions: TopicPartition[]): void;
  resume(partitions: TopicPartition[]): void;
  /** Committed offsets of the group for the partitions (offset < 0 when none). */
  committed(partitions: TopicPartition[], timeoutMs: number): Promise<TopicPartitionOffset[]>;
  /** Moves the fetch position; purges records already fetched for the partition. */
  seek(position: TopicPartitionOffset, timeoutMs: number): Promise<void>;
  /** At-least-once mode: commits offsets (next offset to read) outside any transaction. */
  commitOffsets(offsets: TopicPartitionOffset[]): Promise<void>;
  /** Current position lag per partition: high watermark - position (from cached fetch state). */
  lag(): number | undefined;
  /**
   * Every assigned partition read to its high watermark, as far as the cached fetch state tells
   * (false before an assignment): the end of a topic for a reader, without waiting for a quiet spell.
   */
  atEnd(): boolean;
  /** Why the client cannot reach Kafka right now (since when, which address), if it cannot. */
  connectionProblem?(): ConnectionProblem | undefined;
  /** Leaves the group and releases the client, bounded by `timeoutMs`. */
  close(timeoutMs: number): Promise<void>;
  readonly memberDescription: string;
}

const OFFSET_BEGINNING = -2;

/** A binding message as a FetchedRecord (headers merged into one object, key as bytes). */
export function toRecord(m: Kafka.Message): FetchedRecord {
  const key = m.key;
  const headers: Record<string, Buffer> = {};
  // Per record at every stage: a loop, not Object.assign over a spread of the header list.
  if (m.headers) for (const h of m.headers) Object.assign(headers, h);
  return {
    topic: m.topic,
    partition: m.partition,
    offset: m.offset,
    // The binding hands a key as a Buffer of its own; only a string key needs encoding.
    key: key === undefined || key === null ? null : Buffer.isBuffer(key) ? key : Buffer.from(key),
    value: m.value,
    headers,
    timestamp: m.timestamp,
  };
}

/** Creates a librdkafka group consumer. `onError` receives asynchronous client errors, classified. */
export function createConsumer(
  settings: ConsumerSettings,
  listener: RebalanceListener,
  onError: (err: KafkaError) => void,
  log: Logger,
): ConsumerPort {
  const assigned = new AssignedPartitions();
  const native = new Kafka.KafkaConsumer({
    ...consumerProperties(settings),
    rebalance_cb: rebalanceHandler(() => native, assigned.tracking(listener), onError, log),
  }) as NativeConsumer;
  const connection = new ConnectionWatch({
    bootstrapServers: settings.bootstrapServers,
    clientId: settings.clientId,
    log,
  }).attach(native);
  native.on('event.error', (e) => {
    const err = classifyKafkaError(e, 'client');
    connection.error(err);
    onError(err);
  });
  attachDebugLog(native, settings.clientId);
  const credentials = watchCredentials(native, onError);
  watchForStranding(
    native,
    (reason) => {
      const err = strandedError('client', reason);
      log.warn({ err: err.toLog(), client: settings.clientId, reason }, 'kafka: consumer stranded');
      onError(err);
    },
    { consumer: true },
  );
  native.setDefaultConsumeTimeout(100);
  native.setDefaultIsTimeoutOnlyForFirstMessage(true);
  let connected = false;

  let closed = false;
  // See producer.ts: a client with a native call still pending is abandoned, never disconnected.
  let pending = 0;
  const call = <T>(
    op: Parameters<typeof classifyKafkaError>[1],
    fn: (cb: (err: unknown, v: T) => void) => void,
  ) =>
    new Promise<T>((resolve, reject) => {
      pending += 1;
      fn((err, v) => {
        pending -= 1;
        if (err) reject(classifyKafkaError(err, op));
        else resolve(v);
      });
    });

  return {
    native,
    memberDescription: `${settings.clientId}@${settings.groupId}`,
    connect: (timeoutMs) => {
      connected = true;
      return credentials.guard(
        call<void>('connect', (cb) => {
          native.connect({ timeout: timeoutMs }, (err) => cb(err, undefined));
        }),
      );
    },
    subscribe(topics) {
      try {
        native.subscribe(topics);
      } catch (e) {
        throw classifyKafkaError(e, 'consume');
      }
    },
    assign(partitions) {
      try {
        native.incrementalAssign(
          partitions.map((p) => ({ ...p, offset: p.offset < 0 ? OFFSET_BEGINNING : p.offset })),
        );
        assigned.add(partitions);
      } catch (e) {
        throw classifyKafkaError(e, 'consume');
      }
    },
    /**
     * Collects up to `max` records for at most `timeoutMs` (the batch timeout). The binding's
     * own timeout applies per record, so a trickle could hold a batch open for max x timeout; here
     * each call waits only for its first record and the loop stops at the deadline.
     */
    async consume(max, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const out: FetchedRecord[] = [];
      do {
        native.setDefaultConsumeTimeout(Math.max(1, deadline - Date.now()));
        const msgs = await call<Kafka.Message[]>('consume', (cb) =>
          native.consume(max - out.length, (err, m) => cb(err, m)),
        );
        for (const m of msgs) out.push(toRecord(m));
        if (msgs.length === 0) break;
      } while (out.length < max && Date.now() < deadline);
      return out;
    },
    assignment: () => (closed ? [] : toTp(native.assignments())),
    pause(partitions) {
      if (partitions.length > 0) native.pause(partitions);
    },
    resume(partitions) {
      if (partitions.length > 0) native.resume(partitions);
    },
    committed: (partitions, timeoutMs) =>
      call<Kafka.TopicPartitionOffset[]>('committed', (cb) =>
        native.committed(partitions, timeoutMs, (err, tps) => cb(err, tps)),
      ).then((tps) => {
        // A partition the coordinator answered with an error (an unstable offset it gave up
        // waiting for, say) comes back as an Error in its place, with no topic: not "no offset".
        const failed = (tps as unknown[]).find((tp) => tp instanceof Error);
        if (failed !== undefined) throw classifyKafkaError(failed, 'committed');
        // The binding reports "no committed offset" as undefined; keep the contract's "offset < 0".
        return tps.map(({ topic, partition, offset }) => ({
          topic,
          partition,
          offset: offset ?? OFFSET_INVALID,
        }));
      }),
    seek: (position, timeoutMs) =>
      call<void>('seek', (cb) =>
        native.seek(
          { ...position, offset: position.offset < 0 ? OFFSET_BEGINNING : position.offset },
          timeoutMs,
          (err) => cb(err, undefined),
        ),
      ),
    commitOffsets: (offsets) =>
      call<void>('commit-offsets', (cb) => native.commitCb(offsets, (err) => cb(err, undefined))),
    // Questions about the fetch state: a client that cannot answer has no lag to report and is
    // not at the end, never a failure of the loop that asked.
    lag: () => answer(() => lagOf(native, assigned.list()), undefined),
    atEnd: () => answer(() => atEndOf(native, assigned.list()), false),
    connectionProblem: () => connection.problem(),
    close(timeoutMs) {
      // Disconnecting a consumer that never connected crashes the native binding (segfault).
      if (closed || !connected) return Promise.resolve();
      closed = true;
      return closeConsumer(native, pending, timeoutMs, log);
    },
  };
}

function answer<T>(ask: () => T, otherwise: T): T {
  try {
    return ask();
  } catch {
    return otherwise;
  }
}

/** The client's positions of `partitions` (passed: the binding would ask librdkafka for its assignment). */
function positionsOf(native: NativeConsumer, partitions: TopicPartition[]): Kafka.TopicPartitionOffset[] {
  return partitions.length === 0 ? [] : native.position(partitions);
}

/** Current position lag summed over the assigned partitions that have a position and a high watermark. */
function lagOf(native: NativeConsumer, partitions: TopicPartition[]): number | undefined {
  let total = 0;
  let known = false;
  for (const p of positionsOf(native, partitions)) {
    // A partition that delivered nothing since its assignment or a seek has no position (the
    // binding leaves `offset` out); counting it would make the sum NaN.
    if (typeof p.offset !== 'number' || p.offset < 0) continue;
    const w = native.getWatermarkOffsets(p.topic, p.partition);
    if (w.highOffset >= 0) {
      total += Math.max(0, w.highOffset - p.offset);
      known = true;
    }
  }
  return known ? total : undefined;
}

function atEndOf(native: NativeConsumer, partitions: TopicPartition[]): boolean {
  const positions = positionsOf(native, partitions);
  return (
    positions.length > 0 &&
    positions.every((p) => {
      const w = native.getWatermarkOffsets(p.topic, p.partition);
      if (w.highOffset < 0) return false;
      // No position: nothing delivered yet, which is the end only of a partition with no records.
      const at = typeof p.offset === 'number' && p.offset >= 0 ? p.offset : Math.max(0, w.lowOffset);
      return at >= w.highOffset;
    })
  );
}

/** Leaves the group and releases the client within `timeoutMs`; abandons it while a native call is pending. */
function closeConsumer(
  native: NativeConsumer,
  pending: number,
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  if (pending > 0) {
    abandon(native, 0); // consumer calls carry librdkafka timeouts: they return, only later
    log.error({ pending }, 'kafka: abandoning a consumer whose native call never returned');
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      // The close goes on in a pool thread (librdkafka waits without a bound to leave the group):
      // counted as stuck until it returns, so the process says why it cannot exit if it never does.
      timedOut = true;
      abandon(native, 1);
      log.warn({ timeoutMs }, 'kafka: consumer close timed out; the client is abandoned');
      resolve();
    }, timeoutMs);
    try {
      native.disconnect(() => {
        clearTimeout(timer);
        if (timedOut) release(native, 1);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
