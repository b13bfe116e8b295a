import { z } from 'zod';
import { nonEmptyString, port } from './value-schemas.ts';

/**
 * `environment.monitoring.clickhouse_server`: where ClickHouse is and how to log in. The password is
 * never a key of this file: it comes from CLICKHOUSE_PASSWORD, or from the file that
 * CLICKHOUSE_PASSWORD_FILE or `password_file` names (see clickhouse-access.ts), so a config file
 * can be shared, committed or printed without leaking it.
 */
/** Text pasted into a ReplicatedMergeTree argument (a string literal): no quote, backslash or white space. */
const ENGINE_ARGUMENT = /^[^'\\\s]+$/;
const ZOOKEEPER_PATH_EXPECTED =
  'ZooKeeper path starting with "/", not ending with "/", without quotes, backslashes or spaces';
const REPLICA_NAME_EXPECTED =
  'replica name or macro (e.g. "{replica}"), without quotes, backslashes or spaces';

/**
 * `environment.monitoring.clickhouse_server.replication`: the monitoring tables on a ClickHouse
 * cluster whose replicas coordinate through ZooKeeper. Absent: one server, plain ReplacingMergeTree.
 */
export const clickhouseReplicationSchema = z.strictObject({
  /**
   * The other replicas, tried after `hostname:port` in this order by the agent (inserts) and the
   * dashboard (reads) when the one in use is down. Same login and TLS as `hostname`.
   */
  replicas: z
    .array(z.strictObject({ hostname: nonEmptyString(), port: port().default(8123) }), {
      error: 'list of {hostname, port}',
    })
    .min(1, { error: 'at least one other replica' }),
  /**
   * ZooKeeper path under which each table lives, as `<zookeeper_path>/<database>/<table>`; the
   * server's macros (`{shard}`) are substituted, so every replica of a shard must resolve it to the
   * same path.
   */
  zookeeper_path: z
    .string({ error: ZOOKEEPER_PATH_EXPECTED })
    .regex(/^\/.*[^/]$/, { error: ZOOKEEPER_PATH_EXPECTED })
    .regex(ENGINE_ARGUMENT, { error: ZOOKEEPER_PATH_EXPECTED })
    .default('/clickhouse/tables/{shard}/hamstring'),
  /** This replica's name in ZooKeeper; the default macro lets one setting serve every server. */
  replica_name: z
    .string({ error: REPLICA_NAME_EXPECTED })
    .min(1, { error: REPLICA_NAME_EXPECTED })
    .regex(ENGINE_ARGUMENT, { error: REPLICA_NAME_EXPECTED })
    .default('{replica}'),
});

export type ClickHouseReplicationConfig = z.output<typeof clickhouseReplicationSchema>;

export const clickhouseServerSchema = z.strictObject({
  hostname: nonEmptyString(),
  port: port().default(8123),
  /** Where the agent writes and the dashboard reads; created when missing. */
  database: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a ClickHouse identifier ([A-Za-z_][A-Za-z0-9_]*)')
    .default('default'),
  /** ClickHouse user; CLICKHOUSE_USER overrides it. Omitted: ClickHouse's `default` user. */
  user: nonEmptyString().optional(),
  /** File holding the user's password (one line; a trailing newline is dropped). */
  password_file: nonEmptyString().optional(),
  /** HTTPS instead of HTTP (`port` is then the server's `https_port`). */
  tls: z
    .strictObject({
      enabled: z.boolean({ error: 'true or false' }).default(false),
      /** PEM file of the CA that signed the server's certificate; omitted: the system's CAs. */
      ca_file: nonEmptyString().optional(),
    })
    .prefault({}),
  /** A replicated layout (see {@link clickhouseReplicationSchema}); omitted: a single server. */
  replication: clickhouseReplicationSchema.optional(),
});

export type ClickHouseServerConfig = z.output<typeof clickhouseServerSchema>;
