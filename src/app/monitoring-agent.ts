import { errorText } from '../errors/error-text.ts';
import { registerSecret } from '../errors/secrets.ts';
import { clickhouseTargetsFromConfig } from '../monitoring/clickhouse-target.ts';
import { classifyClickHouseError, FAILURE_TEXT, needsOperator } from '../monitoring/clickhouse-errors.ts';
import type { HamstringConfig } from '../config/schema.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import {
  clickhouseFailure,
  ClickHouseConnection,
  type ClickHouseTarget,
  type ClickHouseUnavailable,
} from '../monitoring/clickhouse-connection.ts';
import { clickHouseSinkStage, type SinkHooks } from '../monitoring/clickhouse-sink.ts';
import { monitoringTopicNames } from '../monitoring/topics.ts';
import { MonitoringMetrics } from '../monitoring/monitoring-metrics.ts';
import { ReplicaSchemas } from '../monitoring/replica-schema.ts';
import { TABLES, type TableDef } from '../monitoring/tables.ts';
import {
  exponentialBackOff,
  InMemoryAttemptStore,
  systemClock,
  TransactionalWorker,
  type AttemptStore,
  type BackOff,
  type Clock,
  type KafkaClientFactory,
  type WorkerHooks,
  type WorkerKafkaOptions,
} from '../runtime/index.ts';
import { instanceIdFrom, kafkaOptionsFromConfig } from './worker-config.ts';

export interface MonitoringAgentOptions {
  /** Default: `instanceIdFrom(config)` (runtime.instance_id, HAMSTRING_INSTANCE_ID, the host name). */
  instanceId?: string;
  log?: Logger;
  /** Default `monitoring.agent` (also the stage name). */
  groupId?: string;
  /** Default `clickhouse_`: the agent consumes `<prefix><table>` for every table. */
  topicPrefix?: string;
  /** Default `<prefix>dlt` (`clickhouse_dlt`). */
  deadLetterTopic?: string;
  /** Default `environment.monitoring.clickhouse_server.database` (`default`). */
  database?: string;
  /** Default: every monitoring table (TABLES). */
  tables?: readonly TableDef[];
  /**
   * Default `http(s)://<clickhouse_server.hostname>:<port>`, then each of `replication.replicas`;
   * a URL given here is the only server used. User and password default to the configured ones.
   */
  clickhouseUrl?: string;
  clickhouseUser?: string;
  clickhousePassword?: string;
  /** Overrides of the Kafka settings derived from config (tests shorten timeouts). */
  kafka?: Partial<WorkerKafkaOptions>;
  /** Back-off of the ClickHouse reconnect loop. */
  reconnectBackOff?: BackOff;
  hooks?: SinkHooks;
  /** Hooks of the agent's worker (at least once: `beforeCommit` runs after every insert of the batch, before its offsets commit). */
  workerHooks?: WorkerHooks;
  clients?: KafkaClientFactory;
  /**
   * Where delivery attempts are counted, so `record_errors.max_deliveries` bounds a batch that keeps
   * failing. Default: process-local, shared by the agent's successive workers; pass a started
   * KafkaAttemptStore to bound it across restarts too.
   */
  attemptStore?: AttemptStore;
  clock?: Clock;
  /** Aborts a start that still waits for ClickHouse. */
  signal?: AbortSignal;
}

export interface MonitoringAgent {
  /** The worker currently running the sink; replaced after each ClickHouse outage. */
  readonly worker: TransactionalWorker;
  readonly metrics: MonitoringMetrics;
  /** ClickHouse version of the current connection, e.g. `18.16.1`. */
  readonly clickhouseVersion: string;
  /** Outages recovered so far (each: consumer closed, ClickHouse reconnected, fresh consumer). */
  readonly outages: number;
  /** Resolves true once the worker holds partitions (it consumes), false when it stops or fails first. */
  whenConsuming(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * How long the agent collects one Kafka batch. Rows are inserted at the end of every batch (partial
 * chunks included) and only then are offsets committed, so a row never waits longer than this plus
 * the inserts. Holding a partial chunk across batches instead would mean committing offsets of rows
 * not yet in ClickHouse; therefore `clickhouse_connector.batch_timeout` is honoured as an upper bound
 * on the Kafka batch timeout rather than as a separate flush timer.
 */
export function monitoringBatch(config: HamstringConfig): { size: number; timeoutMs: number } {
  const m = config.pipeline.monitoring;
  return {
    size: m.kafka_batch.size,
    timeoutMs: Math.max(
      1,
      Math.min(m.kafka_batch.timeout_ms, Math.round(m.clickhouse_connector.batch_timeout * 1000)),
    ),
  };
}

/**
 * Starts the monitoring agent: connects ClickHouse (waiting, with a visible back-off loop, while it
 * is unreachable), creates or evolves the tables, then runs the sink stage in a TransactionalWorker
 * in at-least-once mode. Resolves once the worker runs.
 *
 * Recovery from an insert failure (src/monitoring/README.md, "Recovery"): the worker is stopped
 * first, which closes the Kafka consumer and discards the uncommitted batch; then ClickHouse is
 * reconnected with back-off (log line and metric per attempt); then a fresh worker subscribes a new
 * consumer, which replays from the committed offsets. Rows of a replayed batch that reached
 * ClickHouse before are collapsed by the tables' ReplacingMergeTree identity.
 */
export async function startMonitoringAgent(
  config: HamstringConfig,
  options: MonitoringAgentOptions = {},
): Promise<MonitoringAgent> {
  const agent = new Agent(config, options);
  await agent.start();
  return agent;
}

class Agent implements MonitoringAgent {
  readonly metrics: MonitoringMetrics;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #backOff: BackOff;
  /** The servers to insert into, in the order to try them: one, or every replica of a cluster. */
  readonly #targets: readonly ClickHouseTarget[];
  /** Index in #targets of the server in use (or to try first). */
  #current = 0;
  readonly #schemas: ReplicaSchemas;
  readonly #tables: readonly TableDef[];
  readonly #stopController = new AbortController();
  #worker: TransactionalWorker | undefined;
  #conn: ClickHouseConnection | undefined;
  #recovering: Promise<void> | undefined;
  #inOutage = false;
  #outages = 0;
  readonly #attempts: AttemptStore;

  constructor(
    private readonly config: HamstringConfig,
    private readonly o: MonitoringAgentOptions,
  ) {
    const instanceId = this.#instanceId();
    this.#log = (o.log ?? createLogger()).child({ component: 'monitoring-agent', instance: instanceId });
    this.#clock = o.clock ?? systemClock;
    this.#backOff =
      o.reconnectBackOff ??
      exponentialBackOff({ initialMs: 250, multiplier: 2, maxIntervalMs: 10_000, jitter: 0.2 });
    this.#tables = o.tables ?? TABLES;
    this.#attempts = o.attemptStore ?? new InMemoryAttemptStore();
    this.metrics = new MonitoringMetrics({ instance: instanceId });
    this.#targets = clickhouseTargetsFromConfig(config, {
      ...(o.clickhouseUrl !== undefined ? { url: o.clickhouseUrl } : {}),
      ...(o.database !== undefined ? { database: o.database } : {}),
    }).map((target) => ({
      ...target,
      ...(o.clickhouseUser !== undefined ? { username: o.clickhouseUser } : {}),
      ...(o.clickhousePassword !== undefined ? { password: o.clickhousePassword } : {}),
    }));
    for (const target of this.#targets) registerSecret(target.password);
    this.#schemas = new ReplicaSchemas(this.#targets, this.#tables, this.#log);
    o.signal?.addEventListener('abort', () => this.#stopController.abort(), { once: true });
  }

  get worker(): TransactionalWorker {
    if (!this.#worker) throw new Error('monitoring agent not started');
    return this.#worker;
  }

  get clickhouseVersion(): string {
    return this.#conn?.version.text ?? 'unknown';
  }

  get outages(): number {
    return this.#outages;
  }

  get #stopping(): boolean {
    return this.#stopController.signal.aborted;
  }

  async start(): Promise<void> {
    this.#conn = await this.#connect({ failOnOperatorError: true });
    this.#schemas.start();
    if (this.#conn) await this.#startWorker();
  }

  async whenConsuming(): Promise<boolean> {
    // After a crash the group may wait out the dead members' sessions first (up to a minute).
    while (!this.#stopping) {
      const status = this.#worker?.status();
      if (status?.state === 'failed') return false;
      if (status?.ready === true) return true;
      await this.#clock.sleep(100, this.#stopController.signal);
    }
    return false;
  }

  async stop(): Promise<void> {
    this.#stopController.abort();
    await this.#recovering;
    await this.#schemas.stop();
    await this.#worker?.stop();
    await this.#conn?.close();
    this.metrics.clickhouseUp.set(0);
  }

  #instanceId(): string {
    return this.o.instanceId ?? instanceIdFrom(this.config);
  }

  async #startWorker(): Promise<void> {
    const { prefix, groupId, deadLetterTopic } = agentKafkaNames(this.o);
    const stage = clickHouseSinkStage({
      name: groupId,
      groupId,
      topicPrefix: prefix,
      deadLetterTopic,
      tables: this.#tables,
      insertBatchSize: this.config.pipeline.monitoring.clickhouse_connector.batch_size,
      connection: () => {
        if (!this.#conn) throw new Error('no ClickHouse connection');
        return this.#conn;
      },
      onUnavailable: (e) => this.#onUnavailable(e),
      metrics: this.metrics,
      log: this.#log,
      ...(this.o.hooks ? { hooks: this.o.hooks } : {}),
    });
    const worker = new TransactionalWorker({
      stage,
      instanceId: this.#instanceId(),
      mode: 'at-least-once',
      kafka: kafkaOptionsFromConfig(this.config, { groupId, ...this.o.kafka }),
      batch: monitoringBatch(this.config),
      recordErrors: {
        deadLetterTopic: () => deadLetterTopic,
        maxDeliveries: this.config.environment.record_errors.max_deliveries,
      },
      attemptStore: this.#attempts,
      log: this.#log,
      clock: this.#clock,
      ...(this.o.clients ? { clients: this.o.clients } : {}),
      ...(this.o.workerHooks ? { hooks: this.o.workerHooks } : {}),
    });
    this.#worker = worker;
    await worker.start();
  }

  #onUnavailable(e: ClickHouseUnavailable): void {
    if (this.#inOutage || this.#stopping) return;
    this.#inOutage = true;
    this.#outages += 1;
    this.metrics.outages.inc();
    this.metrics.clickhouseUp.set(0);
    // Chained: an outage hitting the worker that a previous recovery is still starting waits for it.
    const next = (this.#recovering ?? Promise.resolve()).then(() => this.#recover(e));
    this.#recovering = next;
    void next.finally(() => {
      if (this.#recovering === next) this.#recovering = undefined;
    });
  }

  async #recover(e: ClickHouseUnavailable): Promise<void> {
    this.#log.warn(
      { event: 'clickhouse-outage', err: errorText(e) },
      'clickhouse: insert failed; closing the Kafka consumer before waiting for ClickHouse',
    );
    try {
      // Order matters: no group membership (and no pending batch) while ClickHouse is away.
      await this.#worker?.stop();
      this.#log.info({ event: 'consumer-closed' }, 'kafka: consumer closed; uncommitted batch discarded');
      await this.#conn?.close();
      this.#conn = undefined;
      // A replica that failed an insert is tried last: the others take the rows meanwhile.
      this.#schemas.markFailed(this.#current);
      this.#current = (this.#current + 1) % this.#targets.length;
      this.#conn = await this.#connect();
      this.#inOutage = false;
      if (this.#conn && !this.#stopping) await this.#startWorker();
    } catch (err) {
      this.#inOutage = false;
      this.#log.error({ err: errorText(err) }, 'monitoring agent: restart after the outage failed');
    }
  }

  /**
   * Connects and brings the schema up to date, retrying with back-off until it works or the agent
   * stops. At start, a failure only an operator can fix (wrong password, untrusted certificate,
   * missing grant) rejects at once, naming the cause, instead of retrying forever; after an outage
   * the agent keeps retrying (a password being rotated), each line naming the cause.
   *
   * With several servers (the replicas of a cluster) each attempt tries them in turn, from the one
   * in use, and the first that answers and takes the schema becomes the one in use: a down replica
   * is a transient failure, not an outage, as long as another answers. The back-off (and its
   * `retrying` line) comes only after every server failed.
   */
  async #connect(opts: { failOnOperatorError?: boolean } = {}): Promise<ClickHouseConnection | undefined> {
    const started = this.#clock.now();
    for (let attempt = 1; !this.#stopping; attempt += 1) {
      this.metrics.reconnectAttempts.inc();
      let failure: unknown;
      for (let tried = 0; tried < this.#targets.length && !this.#stopping; tried += 1) {
        const index = (this.#current + tried) % this.#targets.length;
        const target = this.#targets[index];
        if (target === undefined) continue;
        let conn: ClickHouseConnection | undefined;
        try {
          conn = await ClickHouseConnection.open(target);
          await conn.ensureTables(this.#tables, this.#log);
          this.#current = index;
          this.#schemas.markReady(index);
          this.metrics.clickhouseUp.set(1);
          this.#log.info(
            {
              event: 'clickhouse-connected',
              attempt,
              version: conn.version.text,
              downMs: this.#clock.now() - started,
              ...(this.#targets.length > 1 ? { replica: index } : {}),
            },
            `clickhouse: connected to ${target.url} (${conn.version.text})`,
          );
          return conn;
        } catch (e) {
          await conn?.close();
          failure = e;
          const kind = classifyClickHouseError(e);
          if (opts.failOnOperatorError === true && needsOperator(kind)) {
            this.#log.error(
              { event: 'clickhouse-refused', cause: kind, err: errorText(e) },
              `clickhouse: ${FAILURE_TEXT[kind]}; not retrying`,
            );
            throw clickhouseFailure(`connect to ${target.url}`, e);
          }
          this.#schemas.markFailed(index);
          if (this.#targets.length > 1)
            this.#log.warn(
              { event: 'clickhouse-replica-down', cause: kind, replica: target.url, err: errorText(e) },
              `clickhouse: replica ${target.url} ${FAILURE_TEXT[kind]}; trying the next`,
            );
        }
      }
      if (this.#stopping) break;
      const kind = classifyClickHouseError(failure);
      const delay = this.#backOff(attempt, this.#clock.now() - started) ?? 30_000;
      this.#log.warn(
        {
          event: 'clickhouse-reconnect',
          cause: kind,
          attempt,
          delayMs: delay,
          err: errorText(failure),
          downMs: this.#clock.now() - started,
        },
        `clickhouse: ${FAILURE_TEXT[kind]}, retrying`,
      );
      await this.#clock.sleep(delay, this.#stopController.signal);
    }
    return undefined;
  }
}

/**
 * The Kafka names the agent uses, from its options: its consumer group, the prefix of the topics it
 * reads (`<prefix><table>`) and its dead-letter topic. `hamstring acl-plan monitoring-agent` derives
 * the agent's ACLs from the same function, so the plan cannot drift from what the agent touches.
 */
export function agentKafkaNames(
  o: Pick<MonitoringAgentOptions, 'groupId' | 'topicPrefix' | 'deadLetterTopic'> = {},
  tables: readonly TableDef[] = TABLES,
): { groupId: string; prefix: string; deadLetterTopic: string; inputs: string[] } {
  return { groupId: o.groupId ?? 'monitoring.agent', ...monitoringTopicNames({ ...o, tables }) };
}
