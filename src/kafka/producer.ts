import Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { producerProperties, type ProducerSettings } from './client-config.ts';
import { abandon, release } from './abandoned-clients.ts';
import { attachDebugLog } from './debug-log.ts';
import { strandedError, watchForStranding } from './stranded-client.ts';
import { code } from './error-codes.ts';
import { ConnectionWatch, type ConnectionProblem } from './connection-watch.ts';
import { KafkaError } from './kafka-error.ts';
import type { GroupMetadataSource } from './consumer.ts';
import { NativeCalls } from './producer-calls.ts';
import { DeliveryReports, type TransactionTally } from './producer-deliveries.ts';
import { watchProtocolStats, type ProducerProtocolStats } from './producer-protocol-stats.ts';
import { sendRecord } from './producer-send.ts';
import type { OutgoingRecord, TopicPartitionOffset } from './records.ts';
import { watchCredentials } from './refusal.ts';

export type { DeliveryTally, TransactionTally } from './producer-deliveries.ts';

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
  /** The transaction protocol figures of the latest statistics report (every 2 s), if one came. */
  protocolStats?(): ProducerProtocolStats | undefined;
  close(timeoutMs: number): Promise<void>;
  readonly transactionalId: string | undefined;
}

/** How long close() waits for the delivery reports of records still in flight. */
const REPORTS_AT_CLOSE_MS = 1_000;
/** librdkafka's default `message.max.bytes`. */
const DEFAULT_MESSAGE_MAX_BYTES = 1_000_000;
/** How long an abort waits for the transaction's records to be delivered before it aborts anyway. */
const ABORT_FLUSH_MS = 2_000;
/** How long the disconnect of an abandoned producer whose call came back may take. */
const ABANDONED_DISCONNECT_MS = 5_000;

export function createProducer(settings: ProducerSettings, log: Logger): ProducerPort {
  const properties = producerProperties(settings);
  const native = new Kafka.Producer(properties);
  const messageMaxBytes = Number(properties['message.max.bytes'] ?? DEFAULT_MESSAGE_MAX_BYTES);
  attachDebugLog(native, settings.clientId);
  const calls = new NativeCalls(settings.apiTimeoutMs);
  watchForStranding(native, (reason) => {
    const stranded = strandedError('client', reason);
    log.warn({ err: stranded.toLog(), client: settings.clientId, reason }, 'kafka: producer stranded');
    // Their native calls could only time out; fail them now (close() then abandons the client).
    calls.strand(stranded);
  });
  const protocolStats = watchProtocolStats(native);
  let closed = false;
  const reports = new DeliveryReports(native, log, () => closed);
  const connection = new ConnectionWatch({
    bootstrapServers: settings.bootstrapServers,
    clientId: settings.clientId,
    log,
  }).attach(native);
  native.on('event.error', (e) => {
    const err = classifyKafkaError(e, 'client');
    if (!connection.error(err)) log.debug({ err: err.toLog() }, 'kafka: producer client error');
  });
  // Refused credentials fail the calls waiting now, not after librdkafka's reconnects time out.
  const credentials = watchCredentials(native, (err) => calls.strand(err));

  return {
    transactionalId: settings.transactionalId,
    connect: (timeoutMs) =>
      credentials.guard(
        new Promise<void>((resolve, reject) => {
          native.connect({ timeout: timeoutMs }, (err) =>
            err ? reject(classifyKafkaError(err, 'connect')) : resolve(),
          );
          native.setPollInterval(50);
        }),
      ),
    initTransactions: () => calls.bounded('init-transactions', (t, cb) => native.initTransactions(t, cb)),
    beginTransaction() {
      reports.begin();
      return calls.bounded('begin-transaction', (_t, cb) => native.beginTransaction(cb));
    },
    produce: (record) => sendRecord(native, reports, record, messageMaxBytes),
    sendOffsets: (offsets, consumer) =>
      calls.bounded('send-offsets', (t, cb) =>
        native.sendOffsetsToTransaction(offsets, consumer.native as Kafka.KafkaConsumer, t, cb),
      ),
    commitTransaction: () => calls.bounded('commit-transaction', (t, cb) => native.commitTransaction(t, cb)),
    async abortTransaction() {
      // Aborting while librdkafka still registers the transaction's partitions (the coordinator
      // answers CONCURRENT_TRANSACTIONS until the previous commit's markers are written) sends an
      // EndTxn the coordinator refuses as INVALID_TXN_STATE, fatal for the producer. Delivering
      // the records first lets the registration finish; bounded, so an outage only delays the abort.
      await calls
        .settled('produce', (finish) => native.flush(ABORT_FLUSH_MS, finish), ABORT_FLUSH_MS + 2_000)
        .catch(() => undefined);
      return calls.bounded('abort-transaction', (t, cb) => native.abortTransaction(t, cb));
    },
    async flush(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      await calls.settled('produce', (finish) => native.flush(timeoutMs, finish));
      if (!(await reports.reportsIn(Math.max(0, deadline - Date.now()))))
        throw classifyKafkaError(
          { code: code('_TIMED_OUT'), message: 'the delivery reports of flushed records did not arrive' },
          'produce',
        );
    },
    tally: () => reports.tally(),
    connectionProblem: () => connection.problem(),
    whenIdle: (timeoutMs) => calls.whenIdle(timeoutMs),
    deliveredOffsets: () => reports.delivered,
    protocolStats,
    async close(timeoutMs) {
      if (closed) return;
      closed = true;
      await closeProducer(native, { calls, reports, log, timeoutMs });
    },
  };
}

/**
 * Releases the client: disconnected once the delivery reports of records in flight are in, or
 * abandoned when a native call is still pending (disconnecting it would deadlock).
 */
async function closeProducer(
  native: Kafka.Producer,
  o: { calls: NativeCalls; reports: DeliveryReports; log: Logger; timeoutMs: number },
): Promise<void> {
  const { calls, timeoutMs } = o;
  const pending = calls.pending;
  if (pending > 0) {
    abandon(native, pending);
    o.log.error(
      { pending },
      'kafka: abandoning a producer whose native call never returned (disconnecting it would deadlock)',
    );
    // A call that comes back late (the broker answered again) frees the client: disconnect it then.
    // An abandoned client left connected keeps the binding's dispatchers and poll timer alive, and
    // with them the process, long after its workers stopped.
    calls.onIdle(() => {
      release(native, pending);
      o.log.warn({ pending }, "kafka: the abandoned producer's native call returned; disconnecting it");
      void disconnectWithin(native, ABANDONED_DISCONNECT_MS);
    });
    return;
  }
  const deadline = Date.now() + timeoutMs;
  // Disconnecting stops the binding's report dispatcher: a report still queued then never reaches
  // JavaScript, and the handle that keeps its record's opaque alive is never released (a
  // producer's whole output, for one closed right after flush).
  await o.reports.reportsIn(Math.min(REPORTS_AT_CLOSE_MS, timeoutMs));
  await disconnectWithin(native, Math.max(0, deadline - Date.now()));
}

/**
 * Disconnects the client, waiting at most `timeoutMs` for it. The poll interval stops first: the
 * binding clears it only once the disconnect has finished, and its poll (on the event loop, without
 * the connection lock) meanwhile calls into the librdkafka handle the disconnect deletes on a pool
 * thread: "pure virtual method called", and the process aborts (about one stop in fifty).
 */
function disconnectWithin(native: Kafka.Producer, timeoutMs: number): Promise<void> {
  native.setPollInterval(0);
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
}

export { KafkaError };
