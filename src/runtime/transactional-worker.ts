import { stuckCallsExhaustPool, stuckNativeCalls } from '../kafka/abandoned-clients.ts';
import { classifyKafkaError } from '../kafka/classify.ts';
import { code } from '../kafka/error-codes.ts';
import { KafkaError } from '../kafka/kafka-error.ts';
import type { FetchedRecord, TopicPartition } from '../kafka/records.ts';
import { tpKey } from '../kafka/records.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { AlertConditions, type AlertCondition } from './alert-conditions.ts';
import { AssignmentEpochs } from './assignment-epochs.ts';
import { exponentialBackOff } from './backoff.ts';
import { nextOffsets, partitionsOf } from './batch-offsets.ts';
import { systemClock, type Clock } from './clock.ts';
import { deadLetterOf } from './dead-letter.ts';
import { DeadLetterLimit } from './dead-letter-limit.ts';
import { DeliveryPlanner } from './delivery-attempts/delivery-planner.ts';
import { FailureTracker } from './failure-tracker.ts';
import { defaultRecordErrorPolicy, errorKindOf, type RecordErrorPolicy } from './record-error-policy.ts';
import { planSettlement, positionKey } from './settlement.ts';
import { asOriginal, dueAt, retryTopicsOf } from './retry-topics.ts';
import { createAdmin, type AdminPort } from '../kafka/admin.ts';
import type { ConsumerPort } from '../kafka/consumer.ts';
import { defaultClients, KafkaSession, RetriesExhausted } from './kafka-session.ts';
import { planRecovery, type RecoveryAction } from './recovery-plan.ts';
import {
  BATCH_FINISHED,
  RecordError,
  type ProcessResult,
  type RecordFailure,
  type Stage,
  type StageOutput,
  type StageRecord,
} from './stage.ts';
import { StateConfigurationError } from './state/changelog-topics.ts';
import { StateBinding } from './state/state-binding.ts';
import { StateEngine } from './state/state-engine.ts';
import type { CommitInfo, WorkerHooks, WorkerOptions } from './worker-options.ts';
import { WorkerMetrics } from './worker-metrics.ts';

export type WorkerState = 'starting' | 'running' | 'recovering' | 'stopping' | 'stopped' | 'failed';

/** What health endpoints and operators see. */
export interface WorkerStatus {
  stage: string;
  instanceId: string;
  state: WorkerState;
  live: boolean;
  ready: boolean;
  epoch: number;
  assigned: string[];
  lastCommitAt: number | undefined;
  lastLoopAt: number;
  committedTransactions: number;
  alerts: AlertCondition[];
  failure?: string;
}

/** The batch became stale while it was processed; its work is discarded and its records refetched. */
class StaleBatch extends Error {
  override readonly name: string = 'StaleBatch';
}

/** Processing outlived its deadline: abandoned like a stale batch; the delivery markers count it. */
class ProcessingTimeout extends StaleBatch {
  override readonly name = 'ProcessingTimeout';
}

const FATAL_WINDOW_MS = 60_000;
const MAX_POLL_EXCEEDED = code('_MAX_POLL_EXCEEDED');
const UNKNOWN_MEMBER_ID = code('UNKNOWN_MEMBER_ID');
const ALL_BROKERS_DOWN = code('_ALL_BROKERS_DOWN');

/**
 * Runs one stage as an exactly-once consume-process-produce loop (or at-least-once for sinks), with
 * the recovery paths of the consumer-recovery design. One instance = one group member and one
 * transactional producer with a stable transactional id.
 */
export class TransactionalWorker {
  readonly metrics: WorkerMetrics;
  readonly log: Logger;
  readonly #o: Required<Pick<WorkerOptions, 'keepAliveAfterMs' | 'fatalLimit'>> & WorkerOptions;
  readonly #stage: Stage;
  readonly #clock: Clock;
  readonly #epochs = new AssignmentEpochs();
  readonly #alerts: AlertConditions;
  readonly #session: KafkaSession;
  readonly #groupId: string;
  readonly #hooks: WorkerHooks;
  #state: WorkerState = 'starting';
  #stopRequested = false;
  #stopController = new AbortController();
  #pendingError: KafkaError | undefined;
  #inFlight: AbortController | undefined;
  #txnOpen = false;
  #fatal: number[] = [];
  readonly #policy: RecordErrorPolicy;
  readonly #failures = new FailureTracker();
  readonly #deadLetterLimit: DeadLetterLimit;
  readonly #deliveries: DeliveryPlanner;
  /** Partitions paused until a failed record's back-off ends. */
  readonly #retries = new Map<string, { partition: TopicPartition; offset: number; until: number }>();
  #lastCommitAt: number | undefined;
  #lastLoopAt: number;
  #lagSampledAt = 0;
  #commits = 0;
  #failure: string | undefined;
  #stuckReported = false;
  #loop: Promise<void> | undefined;
  /** State stores and timers of a stage that declares them. */
  readonly #stores: StateBinding | undefined;

  constructor(options: WorkerOptions) {
    this.#o = { keepAliveAfterMs: 1_000, fatalLimit: 3, ...options };
    this.#stage = options.stage;
    this.#clock = options.clock ?? systemClock;
    this.#hooks = options.hooks ?? {};
    this.#groupId = options.kafka.groupId ?? options.stage.name;
    this.#policy = { ...defaultRecordErrorPolicy, ...options.recordErrors };
    this.#deadLetterLimit = new DeadLetterLimit(this.#policy.deadLetterLimit);
    this.#deliveries = new DeliveryPlanner(options.attemptStore, this.#groupId, this.#policy.maxDeliveries);
    this.log = (options.log ?? createLogger()).child({
      stage: this.#stage.name,
      instance: options.instanceId,
    });
    this.metrics = new WorkerMetrics({ stage: this.#stage.name, instance: options.instanceId });
    this.#alerts = new AlertConditions(this.#clock, options.alerts);
    this.#lastLoopAt = this.#clock.now();
    const transactionalId =
      options.mode === 'exactly-once'
        ? (options.kafka.transactionalId ?? `${this.#stage.name}-${options.instanceId}`)
        : undefined;
    this.#session = new KafkaSession({
      kafka: options.kafka,
      groupId: this.#groupId,
      transactionalId,
      clientId: `${this.#stage.name}-${options.instanceId}`,
      topics: this.#subscription(),
      epochs: this.#epochs,
      clients: options.clients ?? defaultClients,
      clock: this.#clock,
      log: this.log,
      metrics: this.metrics,
      reconnectBackOff:
        options.reconnectBackOff ??
        exponentialBackOff({ initialMs: 250, multiplier: 2, maxIntervalMs: 10_000, jitter: 0.2 }),
      onConsumerError: (err) => this.#onConsumerError(err),
      onRevokeOrLost: () => this.#alerts.revokedOrLost(),
      // A worker waiting for Kafka in its visible reconnect loop is not hung: a restart cannot help.
      onReconnectAttempt: () => {
        this.#lastLoopAt = this.#clock.now();
      },
      isStopping: () => this.#stopRequested,
    });
    if (StateEngine.needed(this.#stage)) {
      const engine = new StateEngine({
        stage: this.#stage,
        groupId: this.#groupId,
        instanceId: options.instanceId,
        bootstrapServers: options.kafka.bootstrapServers,
        settings: options.state ?? { dir: 'var/state', replicationFactor: -1 },
        apiTimeoutMs: options.kafka.apiTimeoutMs,
        clock: this.#clock,
        log: this.log,
        registry: this.metrics.registry,
      });
      this.#stores = new StateBinding(engine, {
        epochs: this.#epochs,
        consumer: () => (this.#session.hasConsumer ? this.#session.consumer : undefined),
        apiTimeoutMs: options.kafka.apiTimeoutMs,
      });
      this.#epochs.onChange((cause, partitions) => this.#stores!.onEpochChange(cause, partitions));
    }
    this.#epochs.onChange((cause, partitions) => {
      this.metrics.epochChanges.inc({ cause });
      this.metrics.epoch.set(this.#epochs.current);
      // A lost assignment is involuntary (session timeout, expired generation): say so loudly.
      this.log[cause === 'lost' ? 'warn' : 'info'](
        { event: 'epoch', cause, epoch: this.#epochs.current, partitions: partitions.map(tpKey) },
        `kafka: ${cause}`,
      );
      if (cause === 'reset') {
        this.#retries.clear();
        this.#deliveries.forget();
      } else {
        // A partition that comes back may have been processed by another member meanwhile.
        for (const tp of partitions) this.#retries.delete(tpKey(tp));
        this.#deliveries.forget(partitions);
      }
      this.#inFlight?.abort(new StaleBatch(`assignment changed (${cause}) while the batch was processed`));
    });
  }

  #subscription(): string[] {
    const rt = this.#policy.retryTopics;
    return [...this.#stage.inputTopics, ...(rt ? retryTopicsOf(this.#stage.inputTopics, rt) : [])];
  }

  /** Retry topics mirror their input topic's partition count; created here so a stage needs no set-up. */
  async #ensureRetryTopics(admin: AdminPort): Promise<void> {
    const rt = this.#policy.retryTopics;
    if (!rt) return;
    for (const input of this.#stage.inputTopics) {
      const partitions = (await admin.watermarks(input)).length;
      const topics = retryTopicsOf([input], rt);
      await admin.createTopics(topics.map((topic) => ({ topic, partitions, replicationFactor: -1 })));
    }
  }

  /**
   * Missing input topics are a configuration error (a typo would otherwise leave the worker silently
   * unassigned): the worker fails at start, naming them. A topic created moments ago may not be in
   * every broker's metadata yet, hence the short grace period. When Kafka cannot be asked, the
   * check is skipped and the reconnect loop takes over.
   */
  async #checkInputTopics(admin: AdminPort, graceMs = 10_000): Promise<string[]> {
    try {
      const deadline = this.#clock.now() + graceMs;
      for (;;) {
        const known = new Set(await admin.listTopics(this.#o.kafka.apiTimeoutMs));
        const missing = this.#stage.inputTopics.filter((t) => !known.has(t));
        if (missing.length === 0 || this.#clock.now() >= deadline) return missing;
        await this.#clock.sleep(500);
      }
    } catch {
      return [];
    }
  }

  /** Starts the loop; resolves once the clients are up (or the reconnect loop has begun). */
  async start(): Promise<void> {
    const admin = createAdmin(this.#o.kafka.bootstrapServers, `${this.#stage.name}-admin`);
    try {
      const missing = await this.#checkInputTopics(admin);
      if (missing.length > 0) {
        this.#fail(
          `configuration error: input topic(s) ${missing.join(', ')} of stage ${this.#stage.name} do not exist ` +
            `on ${this.#o.kafka.bootstrapServers}; create them or fix the stage's input topics`,
        );
        this.#loop = Promise.resolve();
        return;
      }
      await this.#ensureRetryTopics(admin);
      if (this.#stores) {
        if (this.#o.mode !== 'exactly-once')
          throw new StateConfigurationError(
            `configuration error: stage ${this.#stage.name} declares state stores or a timer, which need exactly-once mode`,
          );
        await this.#stores.engine.prepare(admin);
      }
    } catch (e) {
      if (!(e instanceof StateConfigurationError)) throw e;
      this.#fail(e.message);
      this.#loop = Promise.resolve();
      return;
    } finally {
      admin.close();
    }
    try {
      await this.#session.startProducer();
      await this.#session.startConsumer();
    } catch (e) {
      this.log.warn({ err: String(e) }, 'kafka: not reachable at start; entering reconnect loop');
      this.#pendingError = classifyKafkaError({ code: ALL_BROKERS_DOWN, message: String(e) }, 'connect');
    }
    this.#state = 'running';
    this.#loop = this.#run();
  }

  /** Resolves when the loop has ended (after `stop()` or a fatal failure). */
  async done(): Promise<void> {
    await this.#loop;
  }

  /**
   * Graceful stop: no new fetches, in-flight processing is told to stop, an open transaction is
   * aborted within its timeout, the member leaves the group, the clients close.
   */
  async stop(): Promise<void> {
    this.#stopRequested = true;
    this.#stopController.abort();
    this.#inFlight?.abort(new StaleBatch('worker stopping'));
    await this.#loop;
  }

  status(): WorkerStatus {
    const now = this.#clock.now();
    const liveWindow = Math.max(this.#o.kafka.maxPollIntervalMs, 60_000);
    const alerts = this.#alerts.active();
    for (const c of [
      'max_poll_exceeded_or_unknown_member',
      'repeated_recovery_after_revoke',
      'aborts_while_lag_grows',
      'no_commit_while_input_arrives',
    ] as const) {
      this.metrics.alert.set({ condition: c }, alerts.includes(c) ? 1 : 0);
    }
    const ready =
      this.#state === 'running' && this.#session.hasConsumer && this.#epochs.assigned().length > 0;
    const stuck = stuckCallsExhaustPool() ? this.#reportStuck() : undefined;
    this.metrics.up.set(ready ? 1 : 0);
    return {
      stage: this.#stage.name,
      instanceId: this.#o.instanceId,
      state: this.#state,
      live: this.#state !== 'failed' && now - this.#lastLoopAt < liveWindow && stuck === undefined,
      ready,
      epoch: this.#epochs.current,
      assigned: this.#epochs.assigned().map(tpKey),
      lastCommitAt: this.#lastCommitAt,
      lastLoopAt: this.#lastLoopAt,
      committedTransactions: this.#commits,
      alerts,
      ...(this.#failure !== undefined || stuck !== undefined ? { failure: this.#failure ?? stuck } : {}),
    };
  }

  /** Why the process needs a restart although the loop runs: libuv threads held by stuck calls. */
  #reportStuck(): string {
    const reason =
      `${stuckNativeCalls()} librdkafka call(s) never returned and each holds a libuv pool thread ` +
      `(UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}); the process must be restarted before ` +
      `the pool is used up`;
    if (!this.#stuckReported) {
      this.#stuckReported = true;
      this.log.error({ event: 'native-calls-stuck', stuck: stuckNativeCalls() }, `not live: ${reason}`);
    }
    return reason;
  }

  async #run(): Promise<void> {
    while (!this.#stopRequested) {
      try {
        await this.#iteration();
      } catch (e) {
        await this.#recover(e);
      }
    }
    this.#state = this.#state === 'failed' ? 'failed' : 'stopping';
    if (this.#txnOpen) await this.#abort('shutdown');
    await this.#closeStores();
    await this.#session.close();
    if (this.#state !== 'failed') this.#state = 'stopped';
    this.log.info({ event: 'stopped', state: this.#state }, 'worker stopped');
  }

  #onConsumerError(err: KafkaError): void {
    if (err.code === MAX_POLL_EXCEEDED) this.metrics.maxPollExceeded.inc();
    if (err.code === MAX_POLL_EXCEEDED || err.code === UNKNOWN_MEMBER_ID) this.#alerts.membershipError();
    if (err.kind === 'membership' || err.code === ALL_BROKERS_DOWN) {
      this.log.warn({ err: err.toLog() }, 'kafka: consumer error; recovering at the next step');
      this.#pendingError ??= err;
      this.#inFlight?.abort(new StaleBatch(`consumer error ${err.codeName}`));
    } else {
      this.log.debug({ err: err.toLog() }, 'kafka: consumer client error');
    }
  }

  #throwPending(): void {
    const e = this.#pendingError;
    if (e) {
      this.#pendingError = undefined;
      throw e;
    }
  }

  async #iteration(): Promise<void> {
    this.#lastLoopAt = this.#clock.now();
    this.#throwPending();
    await this.#resumeDueRetries();
    await this.#stores?.resumeRestored();
    await this.#runTimers();
    const consumer = this.#session.consumer;
    const all = await this.#session.consumer
      .consume(this.#o.batch.size, this.#o.batch.timeoutMs)
      .catch((e: unknown) => Promise.reject(classifyKafkaError(e, 'consume')));
    // The binding hands rebalance events and fetched records to the event loop separately, so the
    // records can arrive before the assignment they were fetched under. One turn of the loop delivers
    // every event the client queued meanwhile; the batch's epoch is taken after it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const epoch = this.#epochs.current;
    this.#throwPending();
    // A partition waiting for a retry is rewound when its back-off ends; anything it delivers is early.
    const admitted = all.filter((r) => !this.#retries.has(tpKey(r)));
    const fetched = this.#holdEarlyRetries(this.#stores ? this.#stores.admit(admitted) : admitted);
    this.#sampleLag();
    if (fetched.length === 0) return;
    this.metrics.batchSize.observe(fetched.length);
    this.metrics.records.inc({ direction: 'in' }, fetched.length);
    this.#alerts.consumed(fetched.length);
    const parts = partitionsOf(fetched);
    const stale = this.#epochs.staleReason(epoch, parts);
    if (stale !== undefined) return this.#discardStale(fetched, epoch, stale);

    this.#stores?.begin();
    try {
      await this.#processBatch(fetched, consumer, epoch, parts);
    } finally {
      // Committed by now, or its changes are dropped with the batch (stale, rewound, failed).
      this.#stores?.aborted();
    }
  }

  async #processBatch(
    fetched: FetchedRecord[],
    consumer: ConsumerPort,
    epoch: number,
    parts: TopicPartition[],
  ): Promise<void> {
    const plan = await this.#deliveries.plan(fetched);
    let result: { outputs: StageOutput[]; failures: RecordFailure[] };
    try {
      result = await this.#processIsolated(plan.process, epoch);
    } catch (e) {
      if (e instanceof StaleBatch) return this.#discardStale(fetched, epoch, e.message);
      throw e;
    } finally {
      if (this.#session.hasConsumer && this.#session.consumer === consumer) consumer.resume(this.#flowing());
    }
    this.#throwPending();
    const staleAfter = this.#epochs.staleReason(epoch, parts);
    if (staleAfter !== undefined) return this.#discardStale(fetched, epoch, staleAfter);
    await this.#settle([...plan.process, ...plan.poison].sort(byPosition), result, plan.poison, epoch);
    for (const s of plan.seekAfter)
      if (!this.#retries.has(tpKey(s))) await consumer.seek(s, this.#o.kafka.apiTimeoutMs);
  }

  /**
   * Records of a retry topic that are not due yet hold their partition back (paused, rewound to them
   * when due): a retry topic is in due order, so nothing behind them is due either.
   */
  #holdEarlyRetries(records: FetchedRecord[]): FetchedRecord[] {
    if (!this.#policy.retryTopics) return records;
    const now = this.#clock.now();
    for (const r of records) {
      const due = dueAt(r);
      if (due === undefined || due <= now || this.#retries.has(tpKey(r))) continue;
      const partition = { topic: r.topic, partition: r.partition };
      this.#retries.set(tpKey(r), { partition, offset: r.offset, until: due });
      this.#session.consumer.pause([partition]);
    }
    return records.filter((r) => {
      const held = this.#retries.get(tpKey(r));
      return held === undefined || r.offset < held.offset;
    });
  }

  /** Assigned partitions that are not waiting for a retry nor for their stores' restore. */
  #flowing(): TopicPartition[] {
    return this.#epochs
      .assigned()
      .filter((tp) => !this.#retries.has(tpKey(tp)) && !this.#stores?.isRestoring(tp));
  }

  /** Ends back-offs that are due: the partition is rewound to its failed record and resumed. */
  async #resumeDueRetries(): Promise<void> {
    const now = this.#clock.now();
    for (const [key, r] of this.#retries) {
      if (r.until > now) continue;
      this.#retries.delete(key);
      if (!this.#epochs.isAssigned(r.partition) || !this.#session.hasConsumer) continue;
      this.#session.consumer.resume([r.partition]);
      await this.#session.consumer.seek({ ...r.partition, offset: r.offset }, this.#o.kafka.apiTimeoutMs);
    }
  }

  /**
   * Processes records so that every record ends as an output or a failure: a RecordError fails its
   * record and the rest is processed again; any other error bisects the batch down to the records
   * that fail alone (a poison record costs its own retries, not its neighbours').
   */
  async #processIsolated(
    records: FetchedRecord[],
    epoch: number,
  ): Promise<{ outputs: StageOutput[]; failures: RecordFailure[] }> {
    if (records.length === 0) return { outputs: [], failures: [] };
    const savepoint = this.#stores?.savepoint();
    try {
      const r = await this.#process(records, epoch);
      return { outputs: r.outputs, failures: r.failures ?? [] };
    } catch (e) {
      // The store changes of a call whose result is thrown away go with it.
      if (savepoint !== undefined) this.#stores!.rollbackTo(savepoint);
      if (e instanceof StaleBatch || e instanceof KafkaError) throw e;
      if (e instanceof RecordError) {
        const rest = records.filter((r) => positionKey(r) !== positionKey(e.record));
        if (rest.length < records.length) {
          const again = await this.#processIsolated(rest, epoch);
          return {
            outputs: again.outputs,
            failures: [...again.failures, { record: e.record, error: e.cause }],
          };
        }
      }
      if (records.length === 1) return { outputs: [], failures: [{ record: records[0]!, error: e }] };
      this.metrics.bisections.inc();
      const mid = Math.ceil(records.length / 2);
      const left = await this.#processIsolated(records.slice(0, mid), epoch);
      const right = await this.#processIsolated(records.slice(mid), epoch);
      return {
        outputs: [...left.outputs, ...right.outputs],
        failures: [...left.failures, ...right.failures],
      };
    }
  }

  /** Commits what a processed batch allows, dead-letters what must go, schedules the retries. */
  async #settle(
    records: FetchedRecord[],
    result: { outputs: StageOutput[]; failures: RecordFailure[] },
    poison: FetchedRecord[],
    epoch: number,
  ): Promise<void> {
    const now = this.#clock.now();
    const plan = planSettlement({
      records,
      outputs: result.outputs,
      failures: result.failures,
      poison,
      policy: this.#policy,
      ...(this.#stage.isRetryable ? { stageRetryable: (e: unknown) => this.#stage.isRetryable!(e) } : {}),
      tracker: this.#failures,
      now,
    });
    const dead = new Set(plan.deadLetters.map((d) => positionKey(d.record)));
    // Store changes name no source record: after any failure, a stateful stage's batch is processed
    // again on exactly the records it commits, so its changes are theirs and nothing else's.
    const redo = this.#stores !== undefined && result.failures.length > 0;
    let outputs = redo ? undefined : plan.outputs;
    if (outputs === undefined) {
      this.#stores?.rollbackTo(0);
      // Outputs do not name their sources, so those of the held-back records cannot be picked out.
      const again = await this.#processIsolated(
        plan.keep.filter((r) => !dead.has(positionKey(r)) && !poison.includes(r)),
        epoch,
      );
      if (again.failures.length > 0) {
        this.log.warn(
          { event: 'rerun-failed', failures: again.failures.length },
          'stage failed differently on rerun; rewinding',
        );
        return this.#rewind();
      }
      outputs = again.outputs;
    }
    const tripped = this.#deadLetterLimit.record(plan.keep.map((r) => dead.has(positionKey(r))));
    if (tripped !== undefined) {
      this.#fail(
        `dead-letter limit exceeded: ${tripped}; consumption stopped, nothing of this batch committed`,
      );
      return;
    }
    const deadLetters = plan.deadLetters.map((d) =>
      this.#deadLetter(
        asOriginal(d.record),
        d.error,
        d.kind,
        d.history.attempts,
        d.history.firstFailure,
        d.history.lastFailure,
      ),
    );
    if (
      plan.keep.length > 0 &&
      !(await this.#commit(plan.keep, epoch, outputs, [...deadLetters, ...plan.forwards]))
    )
      return;
    if (plan.forwards.length > 0)
      this.metrics.retries.inc({ error_kind: 'retry-topic' }, plan.forwards.length);
    for (const d of plan.deadLetters) this.metrics.deadLetters.inc({ error_kind: d.kind });
    for (const r of plan.keep) this.#failures.forget(r);
    for (const r of plan.retries) {
      this.#retries.set(tpKey(r.partition), {
        partition: r.partition,
        offset: r.offset,
        until: now + r.delayMs,
      });
      this.#session.consumer.pause([r.partition]);
      this.metrics.retries.inc({ error_kind: errorKindOf(r.error) });
      this.log.warn(
        {
          event: 'retry',
          partition: tpKey(r.partition),
          offset: r.offset,
          attempt: r.attempt,
          delayMs: r.delayMs,
          err: errorText(r.error),
        },
        'record failed; its partition waits for the retry, the others flow on',
      );
    }
    await this.#deliveries.settled(plan.retries.map((r) => ({ ...r.partition, offset: r.offset })));
  }

  /**
   * Runs stage.process. If it takes longer than keepAliveAfterMs, the assigned partitions are paused
   * and the consumer is polled meanwhile, so rebalance callbacks are served and max.poll.interval is
   * never exceeded; a rebalance aborts the work through ctx.signal.
   */
  async #process(records: FetchedRecord[], epoch: number): Promise<ProcessResult> {
    const controller = new AbortController();
    this.#inFlight = controller;
    const consumer = this.#session.consumer;
    let finished = false;
    let paused = false;
    const keepAlive = (async () => {
      await this.#clock.sleep(this.#o.keepAliveAfterMs, controller.signal);
      while (!finished && !controller.signal.aborted) {
        if (!paused) {
          consumer.pause(this.#epochs.assigned());
          paused = true;
        }
        const extra = await consumer.consume(1, 100).catch((e: unknown) => {
          this.#onConsumerError(classifyKafkaError(e, 'consume'));
          return [];
        });
        this.#lastLoopAt = this.#clock.now();
        // Only a partition assigned meanwhile can deliver; that assignment already made the batch stale.
        if (extra.length > 0)
          controller.abort(new StaleBatch('records arrived from a newly assigned partition'));
      }
    })();
    const started = this.#clock.now();
    const deadline = setTimeout(() => {
      this.metrics.processingTimeouts.inc();
      controller.abort(
        new ProcessingTimeout(`processing took longer than ${this.#policy.processingTimeoutMs} ms`),
      );
    }, this.#policy.processingTimeoutMs);
    try {
      const work = Promise.resolve(
        this.#stage.process(records.map(toStageRecord), {
          signal: controller.signal,
          log: this.log,
          epoch,
          state: (partition) => {
            if (!this.#stores) throw new Error(`stage ${this.#stage.name} declares no state stores`);
            return this.#stores.partitionState(partition);
          },
        }),
      );
      const aborted = new Promise<never>((_, reject) => {
        const fail = () =>
          reject(
            controller.signal.reason instanceof Error ? controller.signal.reason : new StaleBatch('aborted'),
          );
        if (controller.signal.aborted) fail();
        else controller.signal.addEventListener('abort', fail, { once: true });
      });
      // Work that ignores the signal is abandoned, not awaited: its result would be stale anyway.
      work.catch(() => undefined);
      aborted.catch(() => undefined);
      return await Promise.race([work, aborted]);
    } finally {
      clearTimeout(deadline);
      finished = true;
      controller.abort(new StaleBatch(BATCH_FINISHED));
      await keepAlive;
      this.#inFlight = undefined;
      this.metrics.processSeconds.observe((this.#clock.now() - started) / 1000);
    }
  }

  /**
   * Last checkpoints while the partitions are still ours and no transaction is open: once the
   * producer has flushed and its delivery reports reached the event loop, they cover every commit.
   */
  async #closeStores(): Promise<void> {
    if (!this.#stores) return;
    let delivered: ReadonlyMap<string, number> | undefined;
    try {
      await this.#session.producer.flush(this.#o.kafka.apiTimeoutMs);
      await new Promise<void>((resolve) => setTimeout(resolve, 100));
      delivered = this.#session.producer.deliveredOffsets();
    } catch {
      // No producer (never started, or closed by a failed abort): the per-commit checkpoints stand.
    }
    await this.#stores.engine.close(delivered);
  }

  /**
   * Calls `onTimer` for every assigned, restored partition whose timer is due, each in a transaction
   * of its own: outputs and store changes, no input offsets. A call whose partition was revoked or
   * whose epoch changed meanwhile is discarded (its partition is not ours, or is being restored).
   */
  async #runTimers(): Promise<void> {
    const stores = this.#stores;
    const stage = this.#stage;
    const timers = stores?.engine.timers;
    if (!stores || !stage.onTimer || !timers) return;
    for (const partition of stores.engine.dueTimers(this.#clock.now())) {
      if (this.#stopRequested || this.#pendingError) return;
      const epoch = this.#epochs.current;
      const now = this.#clock.now();
      timers.fired(partition, now);
      stores.engine.metrics.timerCalls.inc();
      const controller = new AbortController();
      this.#inFlight = controller;
      stores.begin();
      try {
        let result: ProcessResult;
        try {
          result = await stage.onTimer({
            signal: controller.signal,
            log: this.log,
            epoch,
            partition,
            now,
            state: stores.partitionState(partition),
          });
        } catch (e) {
          if (controller.signal.aborted) continue;
          this.log.warn(
            { event: 'timer-failed', partition, err: errorText(e) },
            'timer call failed; its changes are dropped',
          );
          continue;
        }
        for (const f of result.failures ?? [])
          this.log.warn(
            { event: 'timer-failure', partition, err: errorText(f.error) },
            'timer call reported a failure',
          );
        if (controller.signal.aborted || !this.#timerStillOurs(epoch, partition)) continue;
        await this.#commitTimer(result.outputs, epoch, partition);
      } finally {
        this.#inFlight = undefined;
        stores.aborted();
      }
    }
  }

  #timerStillOurs(epoch: number, partition: number): boolean {
    return epoch === this.#epochs.current && this.#stores!.engine.isReady(partition);
  }

  async #commitTimer(outputs: StageOutput[], epoch: number, partition: number): Promise<void> {
    const declared = this.#stage.outputTopics === 'any' ? undefined : new Set(this.#stage.outputTopics);
    const undeclared = outputs.find((o) => declared && !declared.has(o.topic));
    if (undeclared)
      throw classifyKafkaError(
        {
          code: code('_INVALID_ARG'),
          message: `stage ${this.#stage.name} produced to undeclared topic ${undeclared.topic}`,
        },
        'produce',
      );
    const changelog = this.#stores!.changelogRecords();
    if (outputs.length === 0 && changelog.length === 0) return;
    const s = this.#session;
    const t0 = this.#clock.now();
    await s.retryInPlace('begin-transaction', () => s.producer.beginTransaction());
    this.#txnOpen = true;
    for (const o of outputs) await s.producer.produce(o);
    for (const c of changelog) await s.producer.produce(c);
    if (!this.#timerStillOurs(epoch, partition)) {
      await this.#abort('stale');
      return;
    }
    this.#stores!.committing();
    await s.retryInPlace('commit-transaction', () => s.producer.commitTransaction());
    this.#txnOpen = false;
    this.#stores!.committed(s.producer.deliveredOffsets());
    this.#committed(outputs.length, t0);
  }

  /** One transaction: outputs, dead letters and input offsets. False when the batch went stale first. */
  async #commit(
    records: FetchedRecord[],
    epoch: number,
    outputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const declared = this.#stage.outputTopics === 'any' ? undefined : new Set(this.#stage.outputTopics);
    for (const o of outputs) {
      if (declared && !declared.has(o.topic)) {
        throw classifyKafkaError(
          {
            code: code('_INVALID_ARG'),
            message: `stage ${this.#stage.name} produced to undeclared topic ${o.topic}`,
          },
          'produce',
        );
      }
    }
    const offsets = nextOffsets(records);
    const info: CommitInfo = {
      epoch,
      records: records.length,
      outputs: outputs.length,
      deadLetters: deadLetters.length,
    };
    const s = this.#session;
    if (this.#o.mode === 'at-least-once')
      return this.#commitAtLeastOnce(records, [...outputs, ...deadLetters], info);

    const t0 = this.#clock.now();
    await s.retryInPlace('begin-transaction', () => s.producer.beginTransaction());
    this.#txnOpen = true;
    for (const o of outputs) await s.producer.produce(o);
    for (const d of deadLetters) await s.producer.produce(d);
    for (const c of this.#stores?.changelogRecords() ?? []) await s.producer.produce(c);
    await this.#hooks.beforeSendOffsets?.(info);
    // Last check before the offsets bind to this generation: a revoke may have arrived meanwhile.
    const stale = this.#epochs.staleReason(epoch, partitionsOf(records));
    if (stale !== undefined) {
      await this.#abort('stale');
      await this.#discardStale(records, epoch, stale);
      return false;
    }
    await s.retryInPlace('send-offsets', () => s.producer.sendOffsets(offsets, s.consumer));
    await this.#hooks.beforeCommit?.(info);
    this.#stores?.committing();
    await s.retryInPlace('commit-transaction', () => s.producer.commitTransaction());
    this.#txnOpen = false;
    this.#stores?.committed(s.producer.deliveredOffsets());
    this.#committed(outputs.length + deadLetters.length, t0);
    await this.#hooks.afterCommit?.(info);
    return true;
  }

  async #commitAtLeastOnce(
    records: FetchedRecord[],
    outputs: StageOutput[],
    info: CommitInfo,
  ): Promise<boolean> {
    const s = this.#session;
    const t0 = this.#clock.now();
    for (const o of outputs) await s.producer.produce(o);
    if (outputs.length > 0) {
      await s.producer.flush(this.#o.kafka.messageTimeoutMs);
      const t = s.producer.tally();
      if (t.firstError) throw t.firstError;
    }
    await this.#hooks.beforeCommit?.(info);
    await s.retryInPlace(
      'commit-offsets',
      () => s.consumer.commitOffsets(nextOffsets(records)),
      this.#o.kafka.commitRetryTimeoutMs,
    );
    this.#committed(outputs.length, t0);
    await this.#hooks.afterCommit?.(info);
    return true;
  }

  #committed(produced: number, t0: number): void {
    const now = this.#clock.now();
    this.#commits += 1;
    this.#lastCommitAt = now;
    this.#alerts.committed();
    this.metrics.commits.inc();
    this.metrics.transactionSeconds.observe((now - t0) / 1000);
    this.metrics.lastCommit.set(now / 1000);
    this.metrics.records.inc({ direction: 'out' }, produced);
    if (this.#state === 'recovering') this.#state = 'running';
  }

  #deadLetter(
    record: FetchedRecord,
    error: unknown,
    errorKind: string,
    attempts: number,
    firstFailure: number,
    lastFailure: number,
  ): StageOutput {
    const topic = this.#policy.deadLetterTopic(record.topic);
    return deadLetterOf(toStageRecord(record), topic, {
      group: this.#groupId,
      stage: this.#stage.name,
      errorKind,
      error,
      attempts,
      firstFailure,
      lastFailure,
    });
  }

  async #discardStale(records: FetchedRecord[], epoch: number, reason: string): Promise<void> {
    this.metrics.staleBatches.inc();
    this.log.warn(
      {
        event: 'stale-batch',
        epoch,
        currentEpoch: this.#epochs.current,
        discarded: records.length,
        partitions: partitionsOf(records).map(tpKey),
        reason,
      },
      'kafka: stale batch discarded before any output transaction',
    );
    this.#observe(() =>
      this.#hooks.onStale?.({ reason, epoch, currentEpoch: this.#epochs.current, records: records.length }),
    );
    if (this.#pendingError) return;
    await this.#rewind();
  }

  /** Seeks every assigned partition back to the group's committed offset, so nothing is skipped. */
  async #rewind(): Promise<void> {
    const s = this.#session;
    const assigned = this.#epochs.assigned();
    if (assigned.length === 0) return;
    try {
      s.consumer.resume(this.#flowing());
      const committed = await s.retryInPlace('committed', () =>
        s.consumer.committed(assigned, this.#o.kafka.apiTimeoutMs),
      );
      for (const c of committed) await s.consumer.seek(c, this.#o.kafka.apiTimeoutMs);
    } catch (e) {
      // A seek can fail while the partition's fetcher starts; a fresh consumer is always safe.
      this.log.warn({ err: errorText(e) }, 'kafka: rewind failed; resetting the consumer instead');
      await s.resetConsumer();
    }
  }

  async #abort(reason: string): Promise<void> {
    this.#stores?.aborted();
    if (!this.#txnOpen) return;
    const s = this.#session;
    const tally = s.producer.tally();
    this.#txnOpen = false;
    this.metrics.aborts.inc({ reason });
    this.#alerts.aborted();
    this.#observe(() =>
      this.#hooks.onAbort?.({ reason, epoch: this.#epochs.current, discardedOutputs: tally.produced }),
    );
    this.metrics.discardedOutputs.inc(tally.produced);
    try {
      await s.retryInPlace('abort-transaction', () => s.producer.abortTransaction());
      this.log.warn(
        { event: 'abort', reason, discardedOutputs: tally.produced, purged: s.producer.tally().purged },
        'kafka: transaction aborted; its outputs are discarded (delivery reports with _PURGE_QUEUE are these outputs, not data loss)',
      );
    } catch (e) {
      const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'abort-transaction');
      await s.closeProducer();
      // A new producer would fence the newer instance that fenced us; the worker is stopping anyway.
      if (err.kind === 'fenced' || this.#stopRequested) {
        this.log.warn(
          { event: 'abort-failed', reason, err: err.toLog() },
          'kafka: abort failed; producer closed',
        );
        return;
      }
      this.log.warn(
        { event: 'abort-failed', reason, err: err.toLog() },
        'kafka: abort failed; recreating the producer',
      );
      await this.#startProducerOrReconnect();
    }
  }

  async #startProducerOrReconnect(): Promise<void> {
    try {
      await this.#session.startProducer();
    } catch {
      await this.#session.reconnect();
    }
  }

  async #recover(e: unknown): Promise<void> {
    if (this.#stopRequested) {
      await this.#abort('shutdown');
      return;
    }
    this.#state = 'recovering';
    const exhausted = e instanceof RetriesExhausted ? e : undefined;
    const err = exhausted?.cause ?? (e instanceof KafkaError ? e : classifyKafkaError(e, 'client'));
    if (err.kind === 'fatal') {
      const now = this.#clock.now();
      this.#fatal = [...this.#fatal.filter((t) => now - t < FATAL_WINDOW_MS), now];
    }
    if (err.kind === 'membership') this.#alerts.membershipError();
    const action: RecoveryAction = planRecovery(err, {
      deadlinePassed: exhausted?.deadlinePassed ?? true,
      recentFatal: this.#fatal.length,
      fatalLimit: this.#o.fatalLimit,
    });
    this.metrics.recoveries.inc({ kind: err.kind, action: action.type });
    this.#alerts.recovery();
    this.log.warn(
      {
        event: 'recovery',
        action: action.type,
        err: err.toLog(),
        epoch: this.#epochs.current,
        partitions: this.#epochs.assigned().map(tpKey),
        ...(e instanceof Error && !(e instanceof KafkaError) && !exhausted ? { stack: e.stack } : {}),
      },
      `kafka: recovering from ${err.codeName} (${err.kind}) by ${action.type}`,
    );
    this.#observe(() =>
      this.#hooks.onRecovery?.({
        kind: err.kind,
        code: err.codeName,
        action: action.type,
        epoch: this.#epochs.current,
      }),
    );
    try {
      if (action.type === 'stop') this.#fail(action.reason);
      if (action.type !== 'reconnect') await this.#abort(err.kind);
      else this.#txnOpen = false;
      switch (action.type) {
        case 'retry-in-place':
        case 'rewind':
          if (this.#session.hasConsumer) await this.#rewind();
          else await this.#session.startConsumer();
          break;
        case 'reset-consumer':
          await this.#session.resetConsumer();
          break;
        case 'recreate-producer':
          await this.#session.closeProducer();
          await this.#startProducerOrReconnect();
          await this.#session.resetConsumer();
          break;
        case 'reconnect':
          await this.#session.reconnect();
          break;
        case 'stop':
          break;
      }
    } catch (inner) {
      // Recovery itself failed (Kafka went away meanwhile): the transport path covers every case.
      this.log.warn({ err: errorText(inner) }, 'kafka: recovery step failed; reconnecting');
      if (!this.#stopRequested) await this.#session.reconnect();
    }
  }

  /** Observer hooks must not break the loop. */
  #observe(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.warn({ err: errorText(e) }, 'worker hook failed');
    }
  }

  #fail(reason: string): void {
    this.#failure = reason;
    this.#state = 'failed';
    this.#stopRequested = true;
    this.log.error({ event: 'failed', reason }, `worker stopped: ${reason}`);
  }

  #sampleLag(): void {
    // Once a second is plenty for the gauge and the alert window, and keeps the hot path cheap.
    const now = this.#clock.now();
    if (!this.#session.hasConsumer || now - this.#lagSampledAt < 1_000) return;
    this.#lagSampledAt = now;
    const lag = this.#session.consumer.lag();
    if (lag !== undefined) {
      this.metrics.lag.set(lag);
      this.#alerts.lag(lag);
    }
  }
}

function byPosition(a: FetchedRecord, b: FetchedRecord): number {
  return a.topic === b.topic ? a.partition - b.partition || a.offset - b.offset : a.topic < b.topic ? -1 : 1;
}

function toStageRecord(r: FetchedRecord): StageRecord {
  return r;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export type { TopicPartition };
