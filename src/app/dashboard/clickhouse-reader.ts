import { errorText } from '../../errors/error-text.ts';
import {
  ClickHouseConnection,
  type ClickHouseTarget,
  type QueryParams,
} from '../../monitoring/clickhouse-connection.ts';

export type Row = Record<string, unknown>;

/**
 * Read-only queries for the dashboard. The connection opens on first use and again after a failure,
 * so the dashboard starts (and shows "ClickHouse unreachable") before ClickHouse does.
 */
export class ClickHouseReader {
  #conn: Promise<ClickHouseConnection> | undefined;

  constructor(readonly target: ClickHouseTarget) {}

  /** Runs `query`; values a request supplied are `{name:String}` placeholders bound from `params`. */
  async rows(query: string, params: QueryParams = {}): Promise<Row[]> {
    this.#conn ??= ClickHouseConnection.open(this.target);
    let conn: ClickHouseConnection;
    try {
      conn = await this.#conn;
    } catch (e) {
      this.#conn = undefined;
      throw e;
    }
    try {
      return await conn.query<Row>(query, params);
    } catch (e) {
      // A refused connection means the server went away: reconnect next time. A query error
      // (bad SQL, missing table) keeps the connection.
      if (/ECONNREFUSED|ECONNRESET|socket hang up|timeout/i.test(errorText(e))) {
        const old = this.#conn;
        this.#conn = undefined;
        await old?.then((c) => c.close()).catch(() => undefined);
      }
      throw e;
    }
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
