import type Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError } from './kafka-error.ts';
import { tpKey } from './records.ts';

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

/** What a produced record carries through librdkafka to its delivery report. */
export interface Opaque {
  generation: number;
  index: number;
  bytes: number;
}

const PURGE_QUEUE = code('_PURGE_QUEUE');
const MSG_SIZE_TOO_LARGE = code('MSG_SIZE_TOO_LARGE');

const emptyTally = (): TransactionTally => ({ produced: 0, delivered: 0, purged: 0, failed: 0, refused: [] });

/**
 * The delivery reports of one producer's records: the tally of the current transaction (reports of
 * an earlier one, which can arrive after the next began, count in no tally), the highest offset
 * delivered per partition, and waiting until every produced record has its report.
 */
export class DeliveryReports {
  #tally = emptyTally();
  #generation = 0;
  readonly delivered = new Map<string, number>();
  readonly #waiters = new Set<() => void>();

  constructor(
    private readonly native: Kafka.Producer,
    private readonly log: Logger,
    /** A closed (abandoned) producer's failed deliveries are expected: logged at debug. */
    private readonly closed: () => boolean,
  ) {
    native.on('delivery-report', (err, report) => this.#report(err, report));
  }

  /** A new transaction: a fresh tally, and reports of older records no longer count. */
  begin(): void {
    this.#generation += 1;
    this.#tally = emptyTally();
  }

  /** The opaque of the next record produced; `produced()` counts it once librdkafka took it. */
  next(bytes: number): Opaque {
    return { generation: this.#generation, index: this.#tally.produced, bytes };
  }

  produced(): void {
    this.#tally.produced += 1;
  }

  tally(): TransactionTally {
    return { ...this.#tally, refused: [...this.#tally.refused] };
  }

  #reported(): boolean {
    const t = this.#tally;
    return t.delivered + t.failed + t.purged >= t.produced;
  }

  /**
   * Resolves true once every record produced since `begin` has its delivery report in the tally,
   * false if one is still missing after `timeoutMs`. librdkafka holds the reports until the
   * client's next poll; this polls at once.
   */
  reportsIn(timeoutMs: number): Promise<boolean> {
    if (this.#reported()) return Promise.resolve(true);
    try {
      // Hands the reports librdkafka holds to JavaScript now rather than at the next poll interval.
      this.native.poll();
    } catch {
      // Not connected: the timeout answers.
    }
    return new Promise<boolean>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve(this.#reported());
      };
      const timer = setTimeout(done, timeoutMs);
      this.#waiters.add(done);
    });
  }

  #report(err: Kafka.LibrdKafkaError | null | undefined, report: Kafka.DeliveryReport): void {
    this.#count(err, report);
    if (this.#waiters.size > 0 && this.#reported()) for (const wake of [...this.#waiters]) wake();
  }

  #count(err: Kafka.LibrdKafkaError | null | undefined, report: Kafka.DeliveryReport): void {
    const opaque = report.opaque as Opaque | undefined;
    const own = opaque?.generation === this.#generation;
    const tally = this.#tally;
    if (!err) {
      if (own) tally.delivered += 1;
      const key = tpKey(report);
      if (report.offset > (this.delivered.get(key) ?? -1)) this.delivered.set(key, report.offset);
      return;
    }
    const e = describeFailure(classifyKafkaError(err, 'delivery'), report, opaque);
    if (e.kind === 'refused' && opaque && own) tally.refused.push(e);
    if (e.code === PURGE_QUEUE) {
      if (own) tally.purged += 1;
      return;
    }
    if (own) {
      tally.failed += 1;
      tally.firstError ??= e;
    }
    // A closed (abandoned) producer's transaction never commits: its records fail without loss.
    if (this.closed())
      this.log.debug(
        { err: e.toLog(), topic: report.topic, partition: report.partition },
        'kafka: delivery failed in a closed producer (its transaction is aborted)',
      );
    else
      this.log.warn(
        { err: e.toLog(), topic: report.topic, partition: report.partition },
        'kafka: delivery failed',
      );
  }
}

/** A failed delivery naming its record: refused for its size or content, or its topic gone or forbidden. */
function describeFailure(
  e: KafkaError,
  report: Kafka.DeliveryReport,
  opaque: Opaque | undefined,
): KafkaError {
  if (!opaque) return e;
  const ref = { topic: report.topic, partition: report.partition, index: opaque.index, bytes: opaque.bytes };
  if (e.kind === 'refused') {
    // The broker checks whole record batches: neighbours of an oversized record are refused with it.
    const why =
      e.code === MSG_SIZE_TOO_LARGE
        ? "; it or a record batched with it exceeds the topic's max.message.bytes"
        : '';
    return e.about(
      ref,
      `the broker refused record ${ref.index} of the transaction for ${ref.topic}/${ref.partition} (${ref.bytes} bytes${why})`,
    );
  }
  // A topic deleted while the worker runs, or one it may not write: name it.
  if (e.kind === 'config' || e.kind === 'authorization')
    return e.about(ref, `producing to topic ${report.topic}`);
  return e;
}
