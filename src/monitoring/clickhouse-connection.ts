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
  type TableReplication,
} from './tables.ts';
import { HamstringError } from '../errors/hamstring-error.ts';
import { classifyClickHouseError, FAILURE_TEXT, type ClickHouseFailureKind } from './clickhouse-errors.ts';

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
  /** PEM of the CA to trust when `url` is https (config: clickhouse_server.tls.ca_file). */
  ca?: Buffer;
  /** Replicated tables instead of plain ones (config: clickhouse_server.replication). */
  replication?: TableReplication;
}

/** Values bound to `{name:String}` placeholders of a query (see {@link ClickHouseConnection.query}). */
export type QueryParams = Record<string, string>;

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

/**
 * The settings of one insert of the agent's rows `first`..`last` into `table`.
 *
 * A replicated table must not drop a block as a duplicate: the block hashes (and tokens) it
 * remembers live in ZooKeeper, shared by every replica, so a batch replayed on the next replica
 * after its first chunks reached only the replica that died would be dropped there as "already
 * inserted", and its rows would be missing on the survivor until the dead replica returns. The
 * replay is stored again instead, and the rows' identity collapses the copies (`_dedup` views,
 * merges). A single server keeps the token (from 22.2) that makes a replay cut into the same
 * chunks a no-op.
 */
export function insertSettings(
  target: Pick<ClickHouseTarget, 'replication'>,
  version: ServerVersion,
  token: () => string,
): Record<string, string | number> | undefined {
  if (target.replication) return { insert_deduplicate: 0 };
  return supportsDeduplicationToken(version) ? { insert_deduplication_token: token() } : undefined;
}

/** Query parameters (`{name:Type}` bound by the server) arrived in ClickHouse 19.x. */
export function supportsQueryParameters(v: ServerVersion): boolean {
  return v.major >= 20;
}

/**
 * ClickHouse did not answer or refused a request; `kind` says why (see clickhouse-errors.ts): a
 * retry later may fix `unreachable` and `server`, only the operator `authentication`, `tls` and
 * `access-denied`.
 */
export class ClickHouseUnavailable extends HamstringError {
  override readonly name = 'ClickHouseUnavailable';
  readonly code = 'CLICKHOUSE_UNAVAILABLE';
  readonly kind: ClickHouseFailureKind;
  constructor(message: string, options?: { cause?: unknown; kind?: ClickHouseFailureKind }) {
    super(message, options);
    this.kind = options?.kind ?? classifyClickHouseError(options?.cause);
  }
}

/** A ClickHouseUnavailable whose message starts with what failed and names the cause. */
export function clickhouseFailure(what: string, e: unknown): ClickHouseUnavailable {
  if (e instanceof ClickHouseUnavailable) return e;
  const kind = classifyClickHouseError(e);
  return new ClickHouseUnavailable(`${what}: ${FAILURE_TEXT[kind]}: ${errorText(e)}`, { cause: e, kind });
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
      reject(new ClickHouseUnavailable(`${what}: no answer within ${ms} ms`, { kind: 'unreachable' }));
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
      ...(target.ca !== undefined ? { tls: { ca_cert: target.ca } } : {}),
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
      throw clickhouseFailure(`connect to ${target.url}`, e);
    }
  }

  /**
   * Runs a SELECT whose user-supplied values are placeholders `{name:String}`, never text of the
   * SQL: the server binds them (query parameters) when it can; servers before 20.x cannot, and for
   * them, only here, each placeholder is replaced by the value as an escaped string literal.
   */
  async query<T>(query: string, params: QueryParams = {}, signal?: AbortSignal): Promise<T[]> {
    const names = Object.keys(params);
    const native = supportsQueryParameters(this.version);
    const text = native || names.length === 0 ? query : bindLiterals(query, params);
    const rs = await this.client.query({
      query: text,
      format: 'JSONEachRow',
      ...(native && names.length > 0 ? { query_params: params } : {}),
      ...(signal ? { abort_signal: signal } : {}),
    });
    return rs.json<T>();
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
        await this.command(createTableSql(db, table, this.target.replication));
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

/**
 * Replaces each `{name:String}` placeholder by its value as a string literal. A placeholder without
 * a value, or of another type, is an error: nothing user-supplied is ever pasted in unescaped.
 */
export function bindLiterals(query: string, params: QueryParams): string {
  return query.replace(/\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9_]+)\}/g, (_, name: string, type: string) => {
    const value = params[name];
    if (type !== 'String' || value === undefined)
      throw new Error(`query parameter {${name}:${type}}: no String value bound`);
    return stringLiteral(value);
  });
}

/** A ClickHouse string literal. */
export function stringLiteral(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
