import Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { producerProperties, type ProducerSettings } from './client-config.ts';
import { abandon } from './abandoned-clients.ts';
import { attachDebugLog } from './debug-log.ts';
import { strandedError, watchForStranding } from './stranded-client.ts';
import { code } from './error-codes.ts';
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

/**
 * A producer. Transactional when `transactionalId` is set: one transaction at a time, every native
 * transactional call bounded by `apiTimeoutMs` (librdkafka's own timeout plus a JS guard, so a
 * callback that never comes cannot hang the worker).
 */
export interface ProducerPort {
  connect(timeoutMs: number): Promise<void>;
  initTransactions(): Promise<void>;
  beginTransaction(): Promise<void>;
  /** Queues a record; resolves when queued (not delivered). Waits when the local queue is full. */
  produce(record: OutgoingRecord): Promise<void>;
  sendOffsets(offsets: TopicPartitionOffset[], consumer: GroupMetadataSource): Promise<void>;
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
  /** Non-transactional use: waits until every queued record is delivered or failed. */
  flush(timeoutMs: number): Promise<void>;
  /** Counts since the last beginTransaction (or creation), and the first delivery error seen. */
  tally(): DeliveryTally & { firstError?: KafkaError };
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

export function createProducer(settings: ProducerSettings, log: Logger): ProducerPort {
  const native = new Kafka.Producer(producerProperties(settings));
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
  let tally: DeliveryTally & { firstError?: KafkaError } = {
    produced: 0,
    delivered: 0,
    purged: 0,
    failed: 0,
  };
  let generation = 0;
  let closed = false;
  const delivered = new Map<string, number>();
  // Native calls whose callback has not come yet. librdkafka can block forever inside one (seen:
  // send_offsets_to_transaction after a long broker SIGSTOP); disconnecting then deadlocks against
  // it and pins libuv threads, so such a producer is abandoned instead (see close()).
  let pending = 0;

  native.on('delivery-report', (err, report) => {
    // Reports of a previous transaction can arrive after a new one began; they belong to the old tally.
    const own = (report.opaque as number | undefined) === generation;
    if (!err) {
      if (own) tally.delivered += 1;
      const key = tpKey(report);
      if (report.offset > (delivered.get(key) ?? -1)) delivered.set(key, report.offset);
      return;
    }
    const e = classifyKafkaError(err, 'delivery');
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
  native.on('event.error', (e) => {
    const err = classifyKafkaError(e, 'client');
    log.debug({ err: err.toLog() }, 'kafka: producer client error');
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
      tally = { produced: 0, delivered: 0, purged: 0, failed: 0 };
      return bounded('begin-transaction', (_t, cb) => native.beginTransaction(cb));
    },
    async produce(record) {
      const headers = record.headers
        ? Object.entries(record.headers).map(([k, v]) => ({
            [k]: typeof v === 'string' ? Buffer.from(v) : v,
          }))
        : undefined;
      for (let attempt = 0; ; attempt += 1) {
        try {
          native.produce(
            record.topic,
            record.partition ?? null,
            toBuf(record.value),
            toBuf(record.key),
            record.timestamp ?? null,
            generation,
            headers,
          );
          tally.produced += 1;
          return;
        } catch (e) {
          const err = classifyKafkaError(e, 'produce');
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
    flush: (timeoutMs) => settled('produce', (finish) => native.flush(timeoutMs, finish)),
    tally: () => ({ ...tally }),
    deliveredOffsets: () => delivered,
    close(timeoutMs) {
      if (closed) return Promise.resolve();
      closed = true;
      if (pending > 0) {
        abandon(native, pending);
        log.error(
          { pending },
          'kafka: abandoning a producer whose native call never returned (disconnecting it would deadlock)',
        );
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        try {
          native.disconnect(timeoutMs, () => {
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
