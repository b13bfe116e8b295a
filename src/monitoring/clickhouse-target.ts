import { clickhouseAccess } from '../config/clickhouse-access.ts';
import type { HamstringConfig } from '../config/schema.ts';
import type { ClickHouseTarget } from './clickhouse-connection.ts';

/**
 * The ClickHouse every client of the project talks to (agent, dashboard, benches, tests): URL (https
 * when `tls.enabled`), user, password and CA from `environment.monitoring.clickhouse_server` and the
 * CLICKHOUSE_* variables, timeouts from `pipeline.monitoring.clickhouse_connector`.
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
  };
}
