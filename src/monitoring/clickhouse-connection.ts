import { errorText } from '../errors/error-text.ts';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../observability/logger.ts';
import {
  addColumnSql,
  createDedupViewSql,
  createTableSql,
  diffColumns,
  quoteIdent,
  type ExistingColumn,
  type TableDef,
} from './tables.ts';
import { HamstringError } from '../errors/hamstring-error.ts';

/** Where ClickHouse is and how long its calls may take (config: clickhouse_connector, clickhouse_server). */
export interface ClickHouseTarget {
  url: string;
  database: string;
  /** Bounds the reachability check when a connection opens (connect_timeout_seconds). */
  connectTimeoutMs: number;
  /** Bounds every request, inserts included (operation_timeout_seconds). */
  requestTimeoutMs: number;
  username?: string;
  password?: string;
}

export interface ServerVersion {
  major: number;
  minor: number;
  text: string;
}

export function parseVersion(text: string): ServerVersion {
  const [major = 0, minor = 0] = text.split('.').map((p) => Number.parseInt(p, 10));
  return { major, minor, text };
}

/** `insert_deduplication_token` exists since ClickHouse 22.2; 18.16 rejects unknown settings. */
export function supportsDeduplicationToken(v: ServerVersion): boolean {
  return v.major > 22 || (v.major === 22 && v.minor >= 2);
}

/** ClickHouse did not answer, or failed a request in a way a retry later may fix. */
export class ClickHouseUnavailable extends HamstringError {
  override readonly name = 'ClickHouseUnavailable';
  readonly code = 'CLICKHOUSE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

async function withTimeout<T>(
  ms: number,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ClickHouseUnavailable(`${what}: no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One client plus what the agent learnt about the server when it connected. */
export class ClickHouseConnection {
  private constructor(
    readonly client: ClickHouseClient,
    readonly target: ClickHouseTarget,
    readonly version: ServerVersion,
  ) {}

  /**
   * Creates a client and checks, within connectTimeoutMs, that the server answers a query; reads
   * its version (feature detection). Rejects with ClickHouseUnavailable otherwise.
   */
  static async open(target: ClickHouseTarget): Promise<ClickHouseConnection> {
    const client = createClient({
      url: target.url,
      request_timeout: target.requestTimeoutMs,
      // One insert at a time per agent; a small pool is enough and bounds sockets to a dead server.
      max_open_connections: 4,
      // Failures surface as errors the agent logs itself (with back-off context); no console noise.
      log: { level: ClickHouseLogLevel.OFF },
      ...(target.username !== undefined ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
    });
    try {
      const text = await withTimeout(target.connectTimeoutMs, `connect to ${target.url}`, async (signal) => {
        const rs = await client.query({
          query: 'SELECT version() AS v',
          format: 'JSONEachRow',
          abort_signal: signal,
        });
        const rows = await rs.json<{ v: string }>();
        return rows[0]?.v ?? '0.0';
      });
      return new ClickHouseConnection(client, target, parseVersion(text));
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e instanceof ClickHouseUnavailable
        ? e
        : new ClickHouseUnavailable(`connect to ${target.url}: ${errorText(e)}`, { cause: e });
    }
  }

  async command(query: string): Promise<void> {
    await this.client.command({ query });
  }

  async columns(table: string): Promise<ExistingColumn[]> {
    const rs = await this.client.query({
      // Query parameters ({name:Type}) arrived in 19.x; 18.16 needs literals.
      query: `SELECT name, type FROM system.columns WHERE database = ${stringLiteral(this.target.database)} AND table = ${stringLiteral(table)}`,
      format: 'JSONEachRow',
    });
    return rs.json<ExistingColumn>();
  }

  /**
   * Creates the database, the tables and their `_dedup` views if missing, and adds columns the
   * schema has and a table lacks. Idempotent; safe to run by several agents at once (a concurrent
   * ADD COLUMN of the same column is re-checked and ignored). Type differences are logged, not fixed.
   */
  async ensureTables(
    tables: readonly TableDef[],
    log: Logger,
  ): Promise<{ created: string[]; added: string[] }> {
    const db = this.target.database;
    await this.command(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(db)}`);
    const created: string[] = [];
    const added: string[] = [];
    for (const table of tables) {
      const before = await this.columns(table.name);
      if (before.length === 0) {
        await this.command(createTableSql(db, table));
        created.push(table.name);
      }
      const diff = diffColumns(table, before.length === 0 ? await this.columns(table.name) : before);
      for (const col of diff.missing) {
        try {
          await this.command(addColumnSql(db, table.name, col));
          added.push(`${table.name}.${col.name}`);
        } catch (e) {
          const now = await this.columns(table.name);
          if (!now.some((c) => c.name === col.name)) throw e;
        }
      }
      for (const m of diff.mismatched)
        log.warn({ table: table.name, ...m }, 'clickhouse: column type differs from the schema; not altered');
      await this.command(createDedupViewSql(db, table));
    }
    if (created.length > 0 || added.length > 0)
      log.info({ event: 'clickhouse-schema', created, added }, 'clickhouse: schema brought up to date');
    return { created, added };
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

/** A ClickHouse string literal. */
export function stringLiteral(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
