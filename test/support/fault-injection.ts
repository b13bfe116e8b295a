import type { Logger } from '../../src/observability/logger.ts';
import { syntheticKafkaError } from '../../src/kafka/classify.ts';
import type { ConsumerSettings, ProducerSettings } from '../../src/kafka/client-config.ts';
import type { ConsumerPort, RebalanceListener } from '../../src/kafka/consumer.ts';
import type { KafkaError, KafkaOperation, RawKafkaError } from '../../src/kafka/kafka-error.ts';
import type { ProducerPort } from '../../src/kafka/producer.ts';

/** Port calls that can be made to fail. */
export type FaultableOperation = Extract<
  KafkaOperation,
  | 'init-transactions'
  | 'begin-transaction'
  | 'send-offsets'
  | 'commit-transaction'
  | 'abort-transaction'
  | 'commit-offsets'
  | 'produce'
>;

/**
 * Fail the `nth` call (1-based, counted per operation across every client the factory made) and the
 * `times - 1` calls after it with the given librdkafka error. `after: true` performs the real call
 * first and then reports the error: a commit whose outcome the caller cannot know.
 */
export interface FaultRule {
  operation: FaultableOperation;
  nth: number;
  times?: number;
  error: string;
  flags?: Pick<RawKafkaError, 'isFatal' | 'isRetriable' | 'isTxnRequiresAbort'>;
  after?: boolean;
}

interface Factory {
  consumer(
    s: ConsumerSettings,
    l: RebalanceListener,
    onError: (e: KafkaError) => void,
    log: Logger,
  ): ConsumerPort;
  producer(s: ProducerSettings, log: Logger): ProducerPort;
}

/**
 * Wraps the real client factory so that chosen calls fail with chosen errors, on a real broker.
 * For codes that real faults cannot produce on demand (ILLEGAL_GENERATION on send-offsets, a
 * retriable commit, a commit of unknown outcome).
 */
export class FaultInjector {
  readonly #counts = new Map<FaultableOperation, number>();
  readonly injected: { operation: FaultableOperation; call: number; error: string }[] = [];

  constructor(private readonly rules: FaultRule[]) {}

  calls(op: FaultableOperation): number {
    return this.#counts.get(op) ?? 0;
  }

  async #guard<T>(op: FaultableOperation, real: () => Promise<T>): Promise<T> {
    const n = (this.#counts.get(op) ?? 0) + 1;
    this.#counts.set(op, n);
    const rule = this.rules.find((r) => r.operation === op && n >= r.nth && n < r.nth + (r.times ?? 1));
    if (!rule) return real();
    this.injected.push({ operation: op, call: n, error: rule.error });
    if (rule.after) await real();
    throw syntheticKafkaError(rule.error, op, rule.flags);
  }

  wrap(real: Factory): Factory {
    return {
      consumer: (s, l, onError, log) => {
        const c = real.consumer(s, l, onError, log);
        return Object.assign(Object.create(c) as ConsumerPort, {
          native: c.native,
          commitOffsets: (o: Parameters<ConsumerPort['commitOffsets']>[0]) =>
            this.#guard('commit-offsets', () => c.commitOffsets(o)),
        });
      },
      producer: (s, log) => {
        const p = real.producer(s, log);
        return {
          ...p,
          transactionalId: p.transactionalId,
          initTransactions: () => this.#guard('init-transactions', () => p.initTransactions()),
          beginTransaction: () => this.#guard('begin-transaction', () => p.beginTransaction()),
          sendOffsets: (o, c) => this.#guard('send-offsets', () => p.sendOffsets(o, c)),
          commitTransaction: () => this.#guard('commit-transaction', () => p.commitTransaction()),
          abortTransaction: () => this.#guard('abort-transaction', () => p.abortTransaction()),
          produce: (r) => this.#guard('produce', () => p.produce(r)),
        };
      },
    };
  }
}
