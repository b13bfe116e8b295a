import { errorText } from '../errors/error-text.ts';
import type { Logger } from '../observability/logger.ts';
import { ClickHouseConnection, type ClickHouseTarget } from './clickhouse-connection.ts';
import type { TableDef } from './tables.ts';

/**
 * Keeps the monitoring tables on every replica of a replicated layout, not only on the one the agent
 * inserts into. A replicated table exists per server (18.16's `ON CLUSTER` DDL would wait
 * `distributed_ddl_task_timeout`, 180 s, for a replica that is down), and a replica without the
 * table neither fetches its parts nor answers the dashboard. So the agent runs `ensureTables` on each
 * replica it has not brought up to date yet: at once, then every `intervalMs` until all are,
 * and again for a replica that failed since (it may come back empty, e.g. a replaced disk).
 *
 * A no-op for a single server: the agent's own connect creates the tables there.
 */
export class ReplicaSchemas {
  readonly #ready = new Set<number>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly targets: readonly ClickHouseTarget[],
    private readonly tables: readonly TableDef[],
    private readonly log: Logger,
    private readonly intervalMs = 5_000,
  ) {}

  /** The replica at `index` has the tables (the agent just ran `ensureTables` there). */
  markReady(index: number): void {
    this.#ready.add(index);
  }

  /** The replica at `index` failed: check its tables again once it answers. */
  markFailed(index: number): void {
    this.#ready.delete(index);
    this.#schedule(0);
  }

  start(): void {
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped || this.targets.length < 2 || this.#running) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#running = this.#pass().finally(() => {
        this.#running = undefined;
        if (this.#ready.size < this.targets.length) this.#schedule(this.intervalMs);
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #pass(): Promise<void> {
    for (const [index, target] of this.targets.entries()) {
      if (this.#stopped) return;
      if (this.#ready.has(index)) continue;
      let conn: ClickHouseConnection | undefined;
      try {
        conn = await ClickHouseConnection.open(target);
        const { created } = await conn.ensureTables(this.tables, this.log);
        this.#ready.add(index);
        this.log.info(
          { event: 'clickhouse-replica-schema', replica: target.url, created },
          `clickhouse: tables ready on replica ${target.url}`,
        );
      } catch (e) {
        this.log.debug(
          { event: 'clickhouse-replica-schema-pending', replica: target.url, err: errorText(e) },
          `clickhouse: replica ${target.url} not reachable for its tables yet`,
        );
      } finally {
        await conn?.close();
      }
    }
  }
}
