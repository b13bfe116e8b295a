import Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { producerProperties, type ProducerSettings } from './client-config.ts';
import { abandon } from './abandoned-clients.ts';
import { attachDebugLog } from './debug-log.ts';
import { strandedError, watchForStranding } from './stranded-client.ts';
import { code } from './error-codes.ts';
import { ConnectionWatch, type ConnectionProblem } from './connection-watch.ts';
import { KafkaError, type KafkaOperation } from './kafka-error.ts';
import type { GroupMetadataSource } from './consumer.ts';
import { tpKey, type OutgoingRecord, type TopicPartitionOffset } from './records.ts';

/** Outcome counters of one transaction's records, from delivery reports. */
export interface DeliveryTally {
  produced: number;
  delivered: number;
  /** Purged by an abort (_PURGE_QUEUE): discarded outputs of the aborted transaction, never data loss. */
  purged: number;
  failed: number;
}

/** Delivery outcome of the current transaction, with every record the broker refused. */
export type TransactionTally = DeliveryTally & {
  firstError?: KafkaError;
  /** Errors of kind `refused`, each naming its record (`KafkaError.record`), in delivery order. */
  refused: KafkaError[];
};

/**
 * A producer. Transactional when `transactionalId` is set: one transaction at a time, every native
 * transactional call bounded by `apiTimeoutMs` (librdkafka's own timeout plus a JS guard, so a
 * callback that never comes cannot hang the worker).
 */
export interface ProducerPort {
  connect(timeoutMs: number): Promise<void>;
  initTransactions(): Promise<void>;
  beginTransaction(): Promise<void>;
  /**
   * Queues a record; resolves when queued (not delivered). Waits when the local queue is full. A
   * record the client refuses (larger than `message.max.bytes`, ...) throws a `refused` KafkaError
   * naming it (`record.index` counts the records produced since beginTransaction).
   */
  produce(record: OutgoingRecord): Promise<void>;
  sendOffsets(offsets: TopicPartitionOffset[], consumer: GroupMetadataSource): Promise<void>;
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
  /**
   * Non-transactional use: waits until every queued record is delivered or failed and its delivery
   * report is in the tally.
   */
  flush(timeoutMs: number): Promise<void>;
  /** Counts since the last beginTransaction (or creation), and the first delivery error seen. */
  tally(): TransactionTally;
  /** Why the client cannot reach Kafka right now (since when, which address), if it cannot. */
  connectionProblem?(): ConnectionProblem | undefined;
  /**
   * Resolves true once no native transactional call is pending (a commit or abort whose JS guard
   * gave up may still run in librdkafka; another call meanwhile fails with _CONFLICT), false when
   * one still is after `timeoutMs`.
   */
  whenIdle?(timeoutMs: number): Promise<boolean>;
  /**
   * The highest offset delivered per partition (by `tpKey`) over this producer's life, as far as
   * delivery reports have arrived: a lower bound of where its committed records end (state store
   * checkpoints).
   */
  deliveredOffsets(): ReadonlyMap<string, number>;
  close(timeoutMs: number): Promise<void>;
  readonly transactionalId: string | undefined;
}

const PURGE_QUEUE = code('_PURGE_QUEUE');
const QUEUE_FULL = code('_QUEUE_FULL');
const MSG_SIZE_TOO_LARGE = code('MSG_SIZE_TOO_LARGE');
/** How long close() waits for the delivery reports of records still in flight. */
const REPORTS_AT_CLOSE_MS = 1_000;
/** librdkafka's default `message.max.bytes`. */
const DEFAULT_MESSAGE_MAX_BYTES = 1_000_000;

/** What a produced record carries through librdkafka to its delivery report. */
interface Opaque {
  generation: number;
  index: number;
  bytes: number;
}

const size = (v: Buffer | string | null | undefined): number =>
  v === null || v === undefined ? 0 : Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v);

/**
 * Bytes of key, value and headers: what the size limits count, without the batch overhead. Key and
 * value come as the bytes produced, so a string is encoded once, not once more to be measured.
 */
function producedBytes(r: OutgoingRecord, key: Buffer | null, value: Buffer | null): number {
  let n = size(key) + size(value);
  if (r.headers) for (const [k, v] of Object.entries(r.headers)) n += Buffer.byteLength(k) + size(v);
  return n;
}

export function createProducer(settings: ProducerSettings, log: Logger): ProducerPort {
  const properties = producerProperties(settings);
  const native = new Kafka.Producer(properties);
  const messageMaxBytes = Number(properties['message.max.bytes'] ?? DEFAULT_MESSAGE_MAX_BYTES);
  attachDebugLog(native, settings.clientId);
  // Set when the client has forgotten every broker: its calls fail at once instead of timing out.
  let stranded: KafkaError | undefined;
  /** Settles each transactional call still waiting for its callback. */
  const waiting = new Set<(err: unknown) => void>();
  watchForStranding(native, (reason) => {
    stranded = strandedError('client', reason);
    log.warn({ err: stranded.toLog(), client: settings.clientId, reason }, 'kafka: producer stranded');
    // Their native calls could only time out; fail them now (close() then abandons the client).
    for (const finish of [...waiting]) finish(stranded);
  });
  const apiTimeoutMs = settings.apiTimeoutMs;
  let tally: TransactionTally = { produced: 0, delivered: 0, purged: 0, failed: 0, refused: [] };
  let generation = 0;
  let closed = false;
  const delivered = new Map<string, number>();
  // Native calls whose callback has not come yet. librdkafka can block forever inside one (seen:
  // send_offsets_to_transaction after a long broker SIGSTOP); disconnecting then deadlocks against
  // it and pins libuv threads, so such a producer is abandoned instead (see close()).
  let pending = 0;

  native.on('delivery-report', (err, report) => {
    // Reports of a previous transaction can arrive after a new one began; they belong to the old tally.
    const opaque = report.opaque as Opaque | undefined;
    const own = opaque?.generation === generation;
    if (!err) {
      if (own) tally.delivered += 1;
      const key = tpKey(report);
      if (report.offset > (delivered.get(key) ?? -1)) delivered.set(key, report.offset);
      return;
    }
    let e = classifyKafkaError(err, 'delivery');
    if (e.kind === 'refused' && opaque) {
      const ref = {
        topic: report.topic,
        partition: report.partition,
        index: opaque.index,
        bytes: opaque.bytes,
      };
      // The broker checks whole record batches: neighbours of an oversized record are refused with it.
      const why =
        e.code === MSG_SIZE_TOO_LARGE
          ? "; it or a record batched with it exceeds the topic's max.message.bytes"
          : '';
      e = e.about(
        ref,
        `the broker refused record ${ref.index} of the transaction for ${ref.topic}/${ref.partition} (${ref.bytes} bytes${why})`,
      );
      if (own) tally.refused.push(e);
    } else if ((e.kind === 'config' || e.kind === 'authorization') && opaque) {
      // A topic deleted while the worker runs, or one it may not write: name it.
      e = e.about(
        { topic: report.topic, partition: report.partition, index: opaque.index, bytes: opaque.bytes },
        `producing to topic ${report.topic}`,
      );
    }
    if (e.code === PURGE_QUEUE) {
      if (own) tally.purged += 1;
      return;
    }
    if (own) {
      tally.failed += 1;
      tally.firstError ??= e;
    }
    // A closed (abandoned) producer's transaction never commits: its records fail without loss.
    if (closed)
      log.debug(
        { err: e.toLog(), topic: report.topic, partition: report.partition },
        'kafka: delivery failed in a closed producer (its transaction is aborted)',
      );
    else
      log.warn(
        { err: e.toLog(), topic: report.topic, partition: report.partition },
        'kafka: delivery failed',
      );
  });
  // Registered after the counting listener, so it sees the tally that includes the report.
  const reportWaiters = new Set<() => void>();
  const reported = () => tally.delivered + tally.failed + tally.purged >= tally.produced;
  native.on('delivery-report', () => {
    if (reportWaiters.size > 0 && reported()) for (const wake of [...reportWaiters]) wake();
  });
  const connection = new ConnectionWatch({
    bootstrapServers: settings.bootstrapServers,
    clientId: settings.clientId,
    log,
  }).attach(native);
  native.on('event.error', (e) => {
    const err = classifyKafkaError(e, 'client');
    if (!connection.error(err)) log.debug({ err: err.toLog() }, 'kafka: producer client error');
  });

  /**
   * A native call's promise: settled by its callback, or at once with the stranded error once the
   * client is found stranded (the call could only time out), or by `guardMs` if given.
   */
  const settled = (op: KafkaOperation, start: (finish: (err: unknown) => void) => void, guardMs?: number) =>
    new Promise<void>((resolve, reject) => {
      if (stranded) return reject(strandedError(op));
      let done = false;
      const finish = (err: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(guard);
        waiting.delete(finish);
        if (err) reject(classifyKafkaError(err, op));
        else resolve();
      };
      const timedOut = { code: code('_TIMED_OUT'), message: `${op} gave no answer`, isRetriable: true };
      const guard = guardMs === undefined ? undefined : setTimeout(() => finish(timedOut), guardMs);
      waiting.add(finish);
      start(finish);
    });

  /** Runs a native transactional call bounded by apiTimeoutMs, on both sides of the binding. */
  const bounded = (op: KafkaOperation, fn: (timeoutMs: number, cb: (err: unknown) => void) => void) =>
    settled(
      op,
      (finish) => {
        pending += 1;
        fn(apiTimeoutMs, (err) => {
          pending -= 1;
          finish(err);
        });
      },
      apiTimeoutMs + 2_000,
    );

  const toBuf = (v: Buffer | string | null | undefined): Buffer | null =>
    v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v);

  /**
   * Resolves true once every record produced since beginTransaction has its delivery report in the
   * tally, false if one is still missing after `timeoutMs`. librdkafka holds the reports until the
   * client's next poll; this polls at once.
   */
  const reportsIn = (timeoutMs: number): Promise<boolean> => {
    if (reported()) return Promise.resolve(true);
    try {
      // Hands the reports librdkafka holds to JavaScript now rather than at the next poll interval.
      native.poll();
    } catch {
      // Not connected: the timeout answers.
    }
    return new Promise<boolean>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        reportWaiters.delete(done);
        resolve(reported());
      };
      const timer = setTimeout(done, timeoutMs);
      reportWaiters.add(done);
    });
  };

  return {
    transactionalId: settings.transactionalId,
    connect: (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        native.connect({ timeout: timeoutMs }, (err) =>
          err ? reject(classifyKafkaError(err, 'connect')) : resolve(),
        );
        native.setPollInterval(50);
      }),
    initTransactions: () => bounded('init-transactions', (t, cb) => native.initTransactions(t, cb)),
    beginTransaction() {
      generation += 1;
      tally = { produced: 0, delivered: 0, purged: 0, failed: 0, refused: [] };
      return bounded('begin-transaction', (_t, cb) => native.beginTransaction(cb));
    },
    async produce(record) {
      const headers = record.headers
        ? Object.entries(record.headers).map(([k, v]) => ({
            [k]: typeof v === 'string' ? Buffer.from(v) : v,
          }))
        : undefined;
      const key = toBuf(record.key);
      const value = toBuf(record.value);
      const opaque: Opaque = { generation, index: tally.produced, bytes: producedBytes(record, key, value) };
      for (let attempt = 0; ; attempt += 1) {
        try {
          native.produce(
            record.topic,
            record.partition ?? null,
            value,
            key,
            record.timestamp ?? null,
            opaque,
            headers,
          );
          tally.produced += 1;
          return;
        } catch (e) {
          const err = classifyKafkaError(e, 'produce');
          if (err.kind === 'refused') {
            const ref = { topic: record.topic, partition: record.partition ?? -1, ...opaque };
            const why =
              err.code === MSG_SIZE_TOO_LARGE
                ? `, larger than the producer's message.max.bytes (${messageMaxBytes})`
                : '';
            throw err.about(
              { topic: ref.topic, partition: ref.partition, index: ref.index, bytes: ref.bytes },
              `the client refused record ${ref.index} of the transaction for topic ${ref.topic} (${ref.bytes} bytes${why})`,
            );
          }
          if (err.code !== QUEUE_FULL || attempt > 2_000) throw err;
          // The local queue drains as deliveries complete; wait instead of failing the transaction.
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    },
    sendOffsets: (offsets, consumer) =>
      bounded('send-offsets', (t, cb) =>
        native.sendOffsetsToTransaction(offsets, consumer.native as Kafka.KafkaConsumer, t, cb),
      ),
    commitTransaction: () => bounded('commit-transaction', (t, cb) => native.commitTransaction(t, cb)),
    abortTransaction: () => bounded('abort-transaction', (t, cb) => native.abortTransaction(t, cb)),
    async flush(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      await settled('produce', (finish) => native.flush(timeoutMs, finish));
      if (!(await reportsIn(Math.max(0, deadline - Date.now()))))
        throw classifyKafkaError(
          { code: code('_TIMED_OUT'), message: 'the delivery reports of flushed records did not arrive' },
          'produce',
        );
    },
    tally: () => ({ ...tally, refused: [...tally.refused] }),
    connectionProblem: () => connection.problem(),
    async whenIdle(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return pending === 0;
    },
    deliveredOffsets: () => delivered,
    async close(timeoutMs) {
      if (closed) return;
      closed = true;
      if (pending > 0) {
        abandon(native, pending);
        log.error(
          { pending },
          'kafka: abandoning a producer whose native call never returned (disconnecting it would deadlock)',
        );
        return;
      }
      const deadline = Date.now() + timeoutMs;
      // Disconnecting stops the binding's report dispatcher: a report still queued then never reaches
      // JavaScript, and the handle that keeps its record's opaque alive is never released (a
      // producer's whole output, for one closed right after flush).
      await reportsIn(Math.min(REPORTS_AT_CLOSE_MS, timeoutMs));
      const left = Math.max(0, deadline - Date.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        try {
          native.disconnect(left, () => {
            clearTimeout(timer);
            resolve();
          });
        } catch {
          // "Producer not connected" after a failed connect: nothing to release.
          clearTimeout(timer);
          resolve();
        }
      });
    },
  };
}

export { KafkaError };
