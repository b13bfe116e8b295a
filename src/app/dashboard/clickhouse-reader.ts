import { errorText } from '../../errors/error-text.ts';
import {
  ClickHouseConnection,
  type ClickHouseTarget,
  type QueryParams,
} from '../../monitoring/clickhouse-connection.ts';
import { classifyClickHouseError, needsOperator } from '../../monitoring/clickhouse-errors.ts';

export type Row = Record<string, unknown>;

/**
 * Read-only queries for the dashboard. The connection opens on first use and again after a failure,
 * so the dashboard starts (and shows "ClickHouse unreachable") before ClickHouse does.
 *
 * With several targets (the replicas of a cluster, each with the tables and `_dedup` views) a
 * server that does not answer is passed over for the next within the same request, and the one
 * that answered is used until it fails in turn; only when none answers does the request fail.
 * A query error (bad SQL, missing table) is the query's, not the server's: it fails at once.
 */
export class ClickHouseReader {
  readonly targets: readonly ClickHouseTarget[];
  #conn: Promise<ClickHouseConnection> | undefined;
  #current = 0;

  constructor(targets: ClickHouseTarget | readonly ClickHouseTarget[]) {
    this.targets = Array.isArray(targets) ? targets : [targets as ClickHouseTarget];
    if (this.targets.length === 0) throw new Error('ClickHouseReader: no ClickHouse target');
  }

  /** The server in use (or to be tried first). */
  get target(): ClickHouseTarget {
    return this.targets[this.#current] ?? (this.targets[0] as ClickHouseTarget);
  }

  /** Runs `query`; values a request supplied are `{name:String}` placeholders bound from `params`. */
  async rows(query: string, params: QueryParams = {}): Promise<Row[]> {
    let failure: unknown;
    for (let tried = 0; tried < this.targets.length; tried += 1) {
      this.#conn ??= ClickHouseConnection.open(this.target);
      let conn: ClickHouseConnection;
      try {
        conn = await this.#conn;
      } catch (e) {
        this.#conn = undefined;
        if (needsOperator(classifyClickHouseError(e))) throw e;
        failure = e;
        this.#next();
        continue;
      }
      try {
        return await conn.query<Row>(query, params);
      } catch (e) {
        // A refused connection means the server went away: reconnect next time. A query error
        // (bad SQL, missing table) keeps the connection.
        if (!/ECONNREFUSED|ECONNRESET|socket hang up|timeout/i.test(errorText(e))) throw e;
        const old = this.#conn;
        this.#conn = undefined;
        await old?.then((c) => c.close()).catch(() => undefined);
        failure = e;
        this.#next();
      }
    }
    throw failure;
  }

  #next(): void {
    this.#current = (this.#current + 1) % this.targets.length;
  }

  async close(): Promise<void> {
    const conn = this.#conn;
    this.#conn = undefined;
    await conn?.then((c) => c.close()).catch(() => undefined);
  }
}

/** ClickHouse writes 64-bit integers as JSON strings; the pages want numbers. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

export function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return v === null || v === undefined ? '' : JSON.stringify(v);
}
