import { clickhouseAccess, clickhouseServerUrls } from '../config/clickhouse-access.ts';
import type { HamstringConfig } from '../config/schema.ts';
import type { ClickHouseTarget } from './clickhouse-connection.ts';

/**
 * The ClickHouse every client of the project talks to (agent, dashboard, benches, tests): URL (https
 * when `tls.enabled`), user, password and CA from `environment.monitoring.clickhouse_server` and the
 * CLICKHOUSE_* variables, timeouts from `pipeline.monitoring.clickhouse_connector`, the table layout
 * from `clickhouse_server.replication`. In a replicated layout this is the first replica; see
 * {@link clickhouseTargetsFromConfig} for all of them.
 *
 * @throws ConfigError when a password or CA file cannot be read.
 */
export function clickhouseTargetFromConfig(
  config: HamstringConfig,
  opts: { database?: string; url?: string; env?: NodeJS.ProcessEnv } = {},
): ClickHouseTarget {
  const server = config.environment.monitoring.clickhouse_server;
  const connector = config.pipeline.monitoring.clickhouse_connector;
  const access = clickhouseAccess(server, opts.env ?? process.env);
  return {
    ...access,
    url: opts.url ?? access.url,
    database: opts.database ?? server.database,
    connectTimeoutMs: connector.connect_timeout_seconds * 1000,
    requestTimeoutMs: connector.operation_timeout_seconds * 1000,
    ...(server.replication
      ? {
          replication: {
            zookeeperPath: server.replication.zookeeper_path,
            replicaName: server.replication.replica_name,
          },
        }
      : {}),
  };
}

/**
 * Every ClickHouse server the agent may insert into and the dashboard read from, in the order to
 * try them: one for the single-server layout (or when `opts.url` names one), each replica for a
 * replicated one. They share the login, the database, the timeouts and the table layout.
 *
 * @throws ConfigError when a password or CA file cannot be read.
 */
export function clickhouseTargetsFromConfig(
  config: HamstringConfig,
  opts: { database?: string; url?: string; env?: NodeJS.ProcessEnv } = {},
): ClickHouseTarget[] {
  const first = clickhouseTargetFromConfig(config, opts);
  if (opts.url !== undefined) return [first];
  return clickhouseServerUrls(config.environment.monitoring.clickhouse_server).map((url) => ({
    ...first,
    url,
  }));
}
