import { z } from 'zod';
import { nonEmptyString, port } from './value-schemas.ts';

/**
 * `environment.monitoring.clickhouse_server`: where ClickHouse is and how to log in. The password is
 * never a key of this file: it comes from CLICKHOUSE_PASSWORD, or from the file that
 * CLICKHOUSE_PASSWORD_FILE or `password_file` names (see clickhouse-access.ts), so a config file
 * can be shared, committed or printed without leaking it.
 */
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
});

export type ClickHouseServerConfig = z.output<typeof clickhouseServerSchema>;
