import { createAdmin } from '../kafka/admin.ts';
import { createConsumer, type ConsumerPort } from '../kafka/consumer.ts';
import { createProducer, type ProducerPort } from '../kafka/producer.ts';
import { classifyKafkaError } from '../kafka/classify.ts';
import type { KafkaError, KafkaOperation } from '../kafka/kafka-error.ts';
import type { ConnectionProblem } from '../kafka/connection-watch.ts';
import type { Logger } from '../observability/logger.ts';
import type { AssignmentEpochs } from './assignment-epochs.ts';
import { exponentialBackOff, type BackOff } from './backoff.ts';
import type { Clock } from './clock.ts';
import { groupMemberSettings, type KafkaClientFactory, type WorkerKafkaOptions } from './worker-options.ts';
import type { WorkerMetrics } from './worker-metrics.ts';
import { planRecovery } from './recovery-plan.ts';
import { HamstringError } from '../errors/hamstring-error.ts';

export const defaultClients: Required<KafkaClientFactory> = {
  consumer: createConsumer,
  producer: createProducer,
  admin: createAdmin,
};

/** A failure after in-place retries; `deadlinePassed` tells whether the API timeout ran out. */
export class RetriesExhausted extends HamstringError {
  override readonly name = 'RetriesExhausted';
  readonly code = 'KAFKA_RETRIES_EXHAUSTED';
  constructor(
    override readonly cause: KafkaError,
    readonly deadlinePassed: boolean,
  ) {
    super(cause.message);
  }
}

/** Between retries of one call in place: 100 ms, doubling to 1 s (the call's deadline bounds the streak). */
const IN_PLACE_BACKOFF = exponentialBackOff({ initialMs: 100, multiplier: 2, maxIntervalMs: 1_000 });
/** The reconnect loop gave up: its plan for the last failure was to stop (configuration, ACL, ...). */
export class ReconnectStopped extends HamstringError {
  override readonly name = 'ReconnectStopped';
  readonly code = 'KAFKA_RECONNECT_STOPPED';
  constructor(
    readonly reason: string,
    override readonly cause?: KafkaError,
  ) {
    super(reason);
  }
}

export interface SessionDeps {
  kafka: WorkerKafkaOptions;
  groupId: string;
  transactionalId: string | undefined;
  clientId: string;
  topics: string[];
  epochs: AssignmentEpochs;
  clients: KafkaClientFactory;
  clock: Clock;
  log: Logger;
  metrics: WorkerMetrics;
  reconnectBackOff: BackOff;
  onConsumerError(err: KafkaError): void;
  onRevokeOrLost(cause: 'revoke' | 'lost'): void;
  /** Each attempt of the reconnect loop: the worker is alive while it tries (liveness). */
  onReconnectAttempt(): void;
  isStopping(): boolean;
}

/**
 * Owns the worker's producer and consumer and the steps for replacing them (docs/recovery.md): a fresh consumer
 * (new generation), a recreated transactional producer (same id), and the reconnect loop.
 */
export class KafkaSession {
  #producer: ProducerPort | undefined;
  #consumer: ConsumerPort | undefined;
  /** The consumer being connected, before it becomes `#consumer`. */
  #starting: ConsumerPort | undefined;
  #consumerSeq = 0;
  /** The producer being connected, before it becomes `#producer`: its connection problem is news. */
  #connecting: ProducerPort | undefined;
  /** The last connection problem a client reported that no success has cleared yet. */
  #lastProblem: ConnectionProblem | undefined;
  /** The reconnect loop, while it runs. */
  #reconnecting: { since: number; attempt: number; lastError?: string } | undefined;
  /** What must hold before the clients start and could not be checked yet (see `prepareFirst`). */
  #preparation: (() => Promise<string | undefined>) | undefined;

  constructor(private readonly d: SessionDeps) {}

  /**
   * Kafka could not be asked at start: each attempt of the reconnect loop first runs `check` (the
   * start-up checks and store preparation) until it passes once. A reason it returns (a missing
   * input topic, a configuration error) ends the loop with that reason, as at start.
   */
  prepareFirst(check: () => Promise<string | undefined>): void {
    this.#preparation = check;
  }

  /** A problem found before any client connects (the start's pre-flight check); cleared by a connected producer. */
  noteConnectionProblem(problem: ConnectionProblem): void {
    this.#lastProblem ??= problem;
  }

  /**
   * Why the clients cannot reach Kafka, if they cannot: the problem a client sees now (address,
   * since when, librdkafka's words), and the reconnect loop's attempt and last error.
   */
  connectivity(): {
    connection?: ConnectionProblem;
    reconnecting?: { since: number; attempt: number; lastError?: string };
  } {
    const seen = [this.#connecting, this.#producer, this.#consumer].flatMap(
      (c) => c?.connectionProblem?.() ?? [],
    );
    // A client that has lost every broker decides readiness, whichever client it is.
    const connection = seen.find((p) => p.allBrokersDown) ?? seen[0] ?? this.#lastProblem;
    return {
      ...(connection ? { connection } : {}),
      ...(this.#reconnecting ? { reconnecting: { ...this.#reconnecting } } : {}),
    };
  }

  get producer(): ProducerPort {
    if (!this.#producer) throw new Error('producer not started');
    return this.#producer;
  }

  get consumer(): ConsumerPort {
    if (!this.#consumer) throw new Error('consumer not started');
    return this.#consumer;
  }

  get hasConsumer(): boolean {
    return this.#consumer !== undefined;
  }

  /**
   * Runs a Kafka call, retrying it in place with the same arguments while it fails with a retriable
   * error and the API timeout has not passed. Anything else, or the deadline, ends in RetriesExhausted.
   */
  async retryInPlace<T>(
    op: KafkaOperation,
    fn: () => Promise<T>,
    timeoutMs = this.d.kafka.apiTimeoutMs,
  ): Promise<T> {
    const deadline = this.d.clock.now() + timeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await fn();
      } catch (e) {
        const err = classifyKafkaError(e, op);
        const passed = this.d.clock.now() >= deadline;
        const plan = planRecovery(err, {
          situation: 'call',
          deadlinePassed: passed,
          recentFatal: 0,
          fatalLimit: 0,
        });
        if (plan.type !== 'retry-in-place' || this.d.isStopping()) throw new RetriesExhausted(err, passed);
        this.d.log.info({ err: err.toLog(), attempt }, 'kafka: retrying call in place');
        await this.d.clock.sleep(
          Math.min(IN_PLACE_BACKOFF(attempt, 0) ?? 1_000, Math.max(0, deadline - this.d.clock.now())),
        );
      }
    }
  }

  /** Creates, connects and (if transactional) initialises the producer. */
  async startProducer(): Promise<void> {
    const k = this.d.kafka;
    const producer = this.d.clients.producer(
      {
        bootstrapServers: k.bootstrapServers,
        clientId: `${this.d.clientId}-producer`,
        transactionalId: this.d.transactionalId,
        transactionTimeoutMs: k.transactionTimeoutMs,
        messageTimeoutMs: k.messageTimeoutMs,
        apiTimeoutMs: k.apiTimeoutMs,
        ...(k.transactionVersion !== undefined ? { transactionVersion: k.transactionVersion } : {}),
        ...(k.metadataRefreshIntervalMs !== undefined
          ? { metadataRefreshIntervalMs: k.metadataRefreshIntervalMs }
          : {}),
        overrides: k.producerOverrides,
      },
      this.d.log,
    );
    this.#connecting = producer;
    try {
      await producer.connect(k.apiTimeoutMs);
      if (this.d.transactionalId !== undefined)
        await this.retryInPlace('init-transactions', () => producer.initTransactions());
    } catch (e) {
      this.#lastProblem = producer.connectionProblem?.() ?? this.#lastProblem;
      await producer.close(1_000);
      throw e;
    } finally {
      this.#connecting = undefined;
    }
    this.#lastProblem = undefined;
    this.#producer = producer;
  }

  async closeProducer(): Promise<void> {
    const p = this.#producer;
    this.#producer = undefined;
    if (p) await p.close(this.d.kafka.apiTimeoutMs);
  }

  /** Creates a fresh consumer (a new group member) and subscribes it. */
  async startConsumer(): Promise<void> {
    const k = this.d.kafka;
    this.#consumerSeq += 1;
    const epochs = this.d.epochs;
    epochs.reset();
    // A replaced consumer can still deliver rebalance callbacks: a close that timed out finishes
    // later (its lost/revoke arrives after the new member's assign), and an abandoned client may be
    // polled once more. Only the current member may change the worker's assignment.
    const current = () => this.#consumer === consumer || this.#starting === consumer;
    const consumer: ConsumerPort = this.d.clients.consumer(
      groupMemberSettings(k, {
        clientId: `${this.d.clientId}-consumer-${this.#consumerSeq}`,
        groupId: this.d.groupId,
      }),
      {
        onAssign: (tps) => {
          if (current()) epochs.assign(tps);
          else this.#ignored('assign', tps.length);
        },
        onRevoke: (tps) => {
          if (!current()) return this.#ignored('revoke', tps.length);
          epochs.revoke(tps);
          this.d.onRevokeOrLost('revoke');
        },
        onLost: (tps) => {
          if (!current()) return this.#ignored('lost', tps.length);
          epochs.lost(tps);
          this.d.onRevokeOrLost('lost');
        },
      },
      (err) => {
        if (this.#consumer === consumer) this.d.onConsumerError(err);
      },
      this.d.log,
    );
    this.#starting = consumer;
    try {
      await consumer.connect(k.apiTimeoutMs);
      consumer.subscribe(this.d.topics);
    } catch (e) {
      this.#starting = undefined;
      await consumer.close(1_000);
      throw e;
    }
    this.#starting = undefined;
    this.#consumer = consumer;
  }

  #ignored(event: string, partitions: number): void {
    this.d.log.info(
      { event: 'stale-rebalance', rebalance: event, partitions },
      'kafka: rebalance callback of a replaced consumer ignored',
    );
  }

  /** Closing leaves the group generation, so no batch of the old one can commit. */
  async closeConsumer(): Promise<void> {
    const c = this.#consumer;
    this.#consumer = undefined;
    this.d.epochs.reset();
    if (c) await c.close(this.d.kafka.apiTimeoutMs);
  }

  async resetConsumer(): Promise<void> {
    await this.closeConsumer();
    await this.startConsumer();
  }

  /**
   * The transport recovery: both clients go, then a visible loop (log line and metric per attempt,
   * bounded back-off) until a producer connects and initialises; then a fresh consumer subscribes.
   * Holds no group membership while Kafka is away. Only failures planned as `reconnect` are waited
   * out; any other (configuration, authorization, ...) ends the loop with `ReconnectStopped`.
   */
  async reconnect(): Promise<void> {
    await this.closeConsumer();
    await this.closeProducer();
    const started = this.d.clock.now();
    const reconnecting: { since: number; attempt: number; lastError?: string } = {
      since: started,
      attempt: 0,
    };
    this.#reconnecting = reconnecting;
    for (let attempt = 1; !this.d.isStopping(); attempt += 1) {
      this.d.metrics.reconnectAttempts.inc();
      this.d.onReconnectAttempt();
      reconnecting.attempt = attempt;
      try {
        if (this.#preparation) {
          const reason = await this.#preparation();
          if (reason !== undefined) throw new ReconnectStopped(reason);
          this.#preparation = undefined;
        }
        await this.startProducer();
        await this.startConsumer();
        this.#reconnecting = undefined;
        this.d.log.warn({ attempt, downMs: this.d.clock.now() - started }, 'kafka: reconnected');
        return;
      } catch (e) {
        if (e instanceof ReconnectStopped) {
          this.#reconnecting = undefined;
          throw e;
        }
        const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'connect');
        reconnecting.lastError = `${err.codeName}: ${err.message}`;
        await this.closeProducer();
        await this.closeConsumer();
        const plan = planRecovery(err, {
          situation: 'reconnect',
          deadlinePassed: true,
          recentFatal: 0,
          fatalLimit: 0,
        });
        if (plan.type === 'stop') {
          this.#reconnecting = undefined;
          throw new ReconnectStopped(plan.reason, err);
        }
        const delay = this.d.reconnectBackOff(attempt, this.d.clock.now() - started) ?? 30_000;
        this.d.log.warn(
          { attempt, delayMs: delay, err: err.toLog(), downMs: this.d.clock.now() - started },
          'kafka: unreachable, retrying',
        );
        await this.d.clock.sleep(delay);
      }
    }
    this.#reconnecting = undefined;
  }

  async close(): Promise<void> {
    await this.closeConsumer();
    await this.closeProducer();
  }
}
