import { checkBootstrap } from '../../kafka/bootstrap-check.ts';
import { classifyKafkaError } from '../../kafka/classify.ts';
import type { TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import { createLogger, type Logger } from '../../observability/logger.ts';
import { AlertConditions } from '../alert-conditions.ts';
import { AssignmentEpochs } from '../assignment-epochs.ts';
import { exponentialBackOff } from '../backoff.ts';
import { systemClock } from '../clock.ts';
import { DeadLetterLimit } from '../record-errors/dead-letter-limit.ts';
import { DeliveryPlanner } from '../delivery-attempts/delivery-planner.ts';
import { workerAttemptStore, type WorkerAttemptStore } from '../delivery-attempts/worker-attempt-store.ts';
import { FailureTracker } from '../record-errors/failure-tracker.ts';
import { defaultClients, KafkaSession, RetriesExhausted } from '../kafka-session.ts';
import { defaultRecordErrorPolicy } from '../record-errors/policy.ts';
import { retryTopicsOf } from '../record-errors/retry-topics.ts';
import { StateConfigurationError } from '../state/changelog-topics.ts';
import { StateBinding } from '../state/state-binding.ts';
import { StateEngine } from '../state/state-engine.ts';
import type { WorkerOptions } from '../worker-options.ts';
import { WorkerMetrics } from '../worker-metrics.ts';
import { PartitionHolds } from './partition-holds.ts';
import { RecoveryExecutor } from './recovery-executor.ts';
import { runStartupChecks } from './startup-checks.ts';
import { Transaction } from './transaction.ts';
import { StaleBatch, fail, type WorkerContext } from './worker-context.ts';
import { WorkerLifecycle } from './worker-lifecycle.ts';
import { InFlight, WorkerProgress } from './worker-progress.ts';
import { WorkerLoop } from './worker-loop.ts';
import { WorkerStatusReporter, type WorkerStatus } from './worker-status.ts';
import { CommittedFloor } from '../committed-floor.ts';

/**
 * Runs one stage as an exactly-once consume-process-produce loop (or at-least-once for sinks), with
 * the recovery paths of the consumer-recovery design. One instance = one group member and one
 * transactional producer with a stable transactional id.
 */
/** How long the start retries its checks and store preparation through transient Kafka errors. */
export class TransactionalWorker {
  readonly metrics: WorkerMetrics;
  readonly log: Logger;
  readonly #ctx: WorkerContext;
  readonly #recovery: RecoveryExecutor;
  readonly #loop: WorkerLoop;
  readonly #status: WorkerStatusReporter;
  readonly #attempts: WorkerAttemptStore;
  #manual = false;
  #running: Promise<void> | undefined;

  constructor(options: WorkerOptions) {
    const o = {
      keepAliveAfterMs: 1_000,
      fatalLimit: 3,
      otherErrorLimit: { count: 5, windowMs: 60_000 },
      ...options,
    };
    const stage = options.stage;
    const clock = options.clock ?? systemClock;
    const groupId = options.kafka.groupId ?? stage.name;
    const policy = { ...defaultRecordErrorPolicy, ...options.recordErrors };
    this.log = (options.log ?? createLogger()).child({ stage: stage.name, instance: options.instanceId });
    this.metrics = new WorkerMetrics({ stage: stage.name, instance: options.instanceId });
    const epochs = new AssignmentEpochs();
    const alerts = new AlertConditions(clock, options.alerts);
    const transactionalId =
      options.mode === 'exactly-once'
        ? (options.kafka.transactionalId ?? `${stage.name}-${options.instanceId}`)
        : undefined;
    const rt = policy.retryTopics;
    this.#attempts = workerAttemptStore({
      option: options.attemptStore,
      bootstrapServers: options.kafka.bootstrapServers,
      topic: options.attemptTopic,
      clientId: `${stage.name}-${options.instanceId}-attempts`,
      log: this.log,
    });
    const session = new KafkaSession({
      kafka: options.kafka,
      groupId,
      transactionalId,
      clientId: `${stage.name}-${options.instanceId}`,
      topics: [...stage.inputTopics, ...(rt ? retryTopicsOf(stage.inputTopics, rt) : [])],
      epochs,
      clients: options.clients ?? defaultClients,
      clock,
      log: this.log,
      metrics: this.metrics,
      reconnectBackOff:
        options.reconnectBackOff ??
        exponentialBackOff({ initialMs: 250, multiplier: 2, maxIntervalMs: 10_000, jitter: 0.2 }),
      onConsumerError: (err) => this.#recovery.onConsumerError(err),
      onRevokeOrLost: () => alerts.revokedOrLost(),
      // A worker waiting for Kafka in its visible reconnect loop is not hung: a restart cannot help.
      onReconnectAttempt: () => {
        this.#ctx.progress.looped(clock.now());
      },
      isStopping: () => this.#ctx.lifecycle.stopRequested,
    });
    const committedFloor = new CommittedFloor();
    const stores = StateEngine.needed(stage)
      ? new StateBinding(
          new StateEngine({
            stage,
            groupId,
            instanceId: options.instanceId,
            bootstrapServers: options.kafka.bootstrapServers,
            settings: options.state ?? { dir: 'var/state', replicationFactor: -1 },
            apiTimeoutMs: options.kafka.apiTimeoutMs,
            clock,
            log: this.log,
            registry: this.metrics.registry,
          }),
          {
            epochs,
            consumer: () => (session.hasConsumer ? session.consumer : undefined),
            committedFloor,
            apiTimeoutMs: options.kafka.apiTimeoutMs,
          },
        )
      : undefined;
    this.#ctx = {
      o,
      stage,
      groupId,
      clock,
      log: this.log,
      metrics: this.metrics,
      hooks: options.hooks ?? {},
      policy,
      epochs,
      alerts,
      session,
      holds: new PartitionHolds({
        clock,
        epochs,
        session,
        apiTimeoutMs: options.kafka.apiTimeoutMs,
        retryTopics: rt !== undefined,
        restoring: stores ? (tp) => stores.isRestoring(tp) : undefined,
      }),
      failures: new FailureTracker(),
      deadLetterLimit: new DeadLetterLimit(policy.deadLetterLimit),
      deliveries: new DeliveryPlanner(this.#attempts.store, groupId, policy.maxDeliveries),
      stores,
      committedFloor,
      lifecycle: new WorkerLifecycle(this.log),
      txn: new Transaction(session, options.kafka.apiTimeoutMs, clock),
      inFlight: new InFlight(),
      progress: new WorkerProgress(clock.now()),
    };
    this.#recovery = new RecoveryExecutor(this.#ctx);
    this.#loop = new WorkerLoop(this.#ctx, this.#recovery);
    this.#status = new WorkerStatusReporter(this.#ctx);
    // First: a newly assigned partition is paused for its restore before anything else runs.
    if (stores) epochs.onChange((cause, partitions) => stores.onEpochChange(cause, partitions));
    epochs.onChange((cause, partitions) => this.#onEpochChange(cause, partitions));
  }

  #onEpochChange(cause: string, partitions: TopicPartition[]): void {
    const ctx = this.#ctx;
    this.metrics.epochChanges.inc({ cause });
    this.metrics.epoch.set(ctx.epochs.current);
    // A lost assignment is involuntary (session timeout, expired generation): say so loudly.
    this.log[cause === 'lost' ? 'warn' : 'info'](
      { event: 'epoch', cause, epoch: ctx.epochs.current, partitions: partitions.map(tpKey) },
      `kafka: ${cause}`,
    );
    if (cause === 'reset') {
      ctx.holds.clear();
      ctx.deliveries.forget();
    } else {
      // A partition that comes back may have been processed by another member meanwhile.
      ctx.holds.release(partitions);
      ctx.deliveries.forget(partitions);
    }
    ctx.inFlight.abort(new StaleBatch(`assignment changed (${cause}) while the batch was processed`));
  }

  /**
   * Checks the input topics and starts the clients, then the loop; resolves once the clients are up,
   * the reconnect loop has begun (Kafka unreachable), or the worker has stopped with a reason
   * (configuration or authorization error; see `status().failure`).
   * With `{ loop: false }` the loop does not run by itself: `step()` drives it (tests on fakes).
   */
  async start(opts: { loop?: boolean } = {}): Promise<void> {
    const ctx = this.#ctx;
    // Fake clusters (tests on fakes) bring their own admin and have no address to check.
    if (!ctx.o.clients?.admin) await this.#preflight();
    const checks = await this.#checkOrDefer();
    if (checks === 'stopped' || (checks === 'passed' && (await this.#startClients()) === 'stopped')) {
      this.#running = Promise.resolve();
      return;
    }
    ctx.lifecycle.started();
    this.#manual = opts.loop === false;
    this.#running = this.#manual ? Promise.resolve() : this.#loop.run().finally(() => this.#attempts.close());
  }

  /**
   * Runs the start-up checks (and store preparation). A reason to stop fails the worker ('stopped').
   * When Kafka cannot be asked (unreachable, a leader election under way), the checks move into the
   * reconnect loop, which runs them before it starts the clients: start() resolves at once, the
   * worker not ready and saying why, instead of waiting or rejecting ('deferred').
   */
  async #checkOrDefer(): Promise<'passed' | 'deferred' | 'stopped'> {
    const ctx = this.#ctx;
    try {
      const stopped = await this.#startupChecks();
      if (stopped === undefined) return 'passed';
      fail(ctx, stopped);
      return 'stopped';
    } catch (e) {
      const err = classifyKafkaError(e, 'admin');
      const plan = this.#recovery.plan(err, 'start');
      if (plan.type === 'stop') {
        fail(ctx, plan.reason);
        return 'stopped';
      }
      this.log.warn(
        { err: err.toLog(), action: plan.type },
        'kafka: the start-up checks could not ask Kafka; the reconnect loop runs them before the clients start',
      );
      ctx.session.prepareFirst(() => this.#startupChecks());
      this.#recovery.defer(err, plan);
      return 'deferred';
    }
  }

  /** Starts the producer, then the consumer; a failure the start plan does not stop for goes to the loop. */
  async #startClients(): Promise<'stopped' | undefined> {
    const ctx = this.#ctx;
    try {
      await ctx.session.startProducer();
      ctx.txn.producerReady();
      await ctx.session.startConsumer();
    } catch (e) {
      const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'connect');
      const plan = this.#recovery.plan(err, 'start', e instanceof RetriesExhausted ? e.deadlinePassed : true);
      if (plan.type === 'stop') {
        await ctx.session.close();
        fail(ctx, plan.reason);
        return 'stopped';
      }
      this.log.warn(
        { err: err.toLog(), action: plan.type },
        `kafka: could not start the clients; ${plan.type}`,
      );
      this.#recovery.defer(err, plan);
    }
    return undefined;
  }

  /**
   * Names an unreachable bootstrap address at once, with its cause (a name that does not resolve, a
   * closed port): librdkafka says only "broker transport failure", and only after its retries. A
   * diagnosis, not a gate: the clients connect and reconnect on their own either way.
   */
  async #preflight(): Promise<void> {
    const bootstrap = this.#ctx.o.kafka.bootstrapServers;
    for (const p of await checkBootstrap(bootstrap, 1_000)) {
      this.#ctx.session.noteConnectionProblem({ ...p, since: this.#ctx.clock.now() });
      this.log.warn(
        { event: 'kafka-unreachable', address: p.address, code: p.code, reason: p.reason },
        `kafka: bootstrap ${p.address} ${p.code === '_RESOLVE' ? 'does not resolve' : 'refuses connections'} (${p.code}): ${p.reason}`,
      );
    }
  }

  async #startupChecks(): Promise<string | undefined> {
    const ctx = this.#ctx;
    const clients = ctx.o.clients?.admin ? ctx.o.clients : defaultClients;
    const admin = clients.admin!(ctx.o.kafka.bootstrapServers, `${ctx.stage.name}-admin`);
    try {
      const stopped = await runStartupChecks({
        admin,
        stage: ctx.stage,
        bootstrapServers: ctx.o.kafka.bootstrapServers,
        apiTimeoutMs: ctx.o.kafka.apiTimeoutMs,
        retryTopics: ctx.policy.retryTopics,
        ...(ctx.policy.deadLetters === false
          ? {}
          : {
              deadLetters: {
                topic: (input: string) => ctx.policy.deadLetterTopic(input),
                create: ctx.policy.createTopics ?? true,
                replicationFactor: ctx.policy.topicReplicationFactor ?? -1,
              },
            }),
        clock: ctx.clock,
        stops: (err) => {
          const plan = this.#recovery.plan(err, 'start');
          return plan.type === 'stop' ? plan.reason : undefined;
        },
      });
      return stopped ?? (await this.#prepareStores(admin));
    } finally {
      admin.close();
    }
  }

  /** Creates the changelogs and opens the local copy; the reason to stop on a configuration error. */
  async #prepareStores(admin: Parameters<StateEngine['prepare']>[0]): Promise<string | undefined> {
    const stores = this.#ctx.stores;
    if (!stores) return undefined;
    if (this.#ctx.o.mode !== 'exactly-once')
      return `configuration error: stage ${this.#ctx.stage.name} declares state stores or a timer, which need exactly-once mode`;
    try {
      await stores.engine.prepare(admin);
      return undefined;
    } catch (e) {
      if (e instanceof StateConfigurationError) return e.message;
      throw e;
    }
  }

  /**
   * One iteration of the loop and the recovery it needs. For tests that start the worker with
   * `{ loop: false }`; calling it while the loop runs by itself is a misuse.
   */
  async step(): Promise<void> {
    if (this.#ctx.lifecycle.stopRequested) return;
    await this.#loop.step();
  }

  /** Resolves when the loop has ended (after `stop()` or a fatal failure). */
  async done(): Promise<void> {
    await this.#running;
  }

  /**
   * Graceful stop: no new fetches, in-flight processing is told to stop, an open transaction is
   * aborted within its timeout, the member leaves the group, the clients close.
   */
  async stop(): Promise<void> {
    const ctx = this.#ctx;
    ctx.lifecycle.requestStop();
    ctx.inFlight.abort(new StaleBatch('worker stopping'));
    await this.#running;
    if (this.#manual) {
      this.#manual = false;
      await this.#loop.shutdown();
      await this.#attempts.close();
    }
  }

  status(): WorkerStatus {
    return this.#status.status();
  }
}

export type { WorkerState, WorkerStatus } from './worker-status.ts';
