import { clickhouseAccess } from '../../src/config/clickhouse-access.ts';
import { clickhouseServerSchema } from '../../src/config/clickhouse-schema.ts';
import { LocalClickHouse } from '../../src/dev/clickhouse-server.ts';
import { defaultVarDir } from '../../src/dev/paths.ts';

/** User, password and CA a test logs in to ClickHouse with; empty for a server without users. */
export interface TestClickHouseLogin {
  username?: string;
  password?: string;
  ca?: Buffer;
}

/**
 * The login the product would use with no `clickhouse_server` keys set, from the same function
 * (`clickhouseAccess`): CLICKHOUSE_USER, CLICKHOUSE_PASSWORD or CLICKHOUSE_PASSWORD_FILE, and
 * CLICKHOUSE_CA_FILE. Every test helper and benchmark that builds a ClickHouse client of its own takes
 * this, so the suite runs against a ClickHouse that requires a password when those are set. Read at
 * each call: a test may set them for a moment.
 */
export function testClickHouseLogin(env: NodeJS.ProcessEnv = process.env): TestClickHouseLogin {
  const { username, password, ca } = clickhouseAccess(
    clickhouseServerSchema.parse({ hostname: '127.0.0.1' }),
    env,
  );
  return {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
}

/** The ClickHouse a test file talks to. */
export interface TestClickHouse {
  /** HTTP URL for @clickhouse/client. */
  url: string;
  server: LocalClickHouse;
}

/** Ports of the server a test file started by hand starts (HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT overrides; TCP = HTTP + 1000). */
const STANDALONE_HTTP_PORT = 21123;

let shared: Promise<TestClickHouse> | undefined;

/**
 * The run-wide ClickHouse named by HAMSTRING_TEST_CLICKHOUSE_DIR (started by
 * scripts/run-integration-tests.ts). Without it a server in `var/test-clickhouse-<port>` is started
 * and left running for reuse. Resolves when the server answers queries.
 */
export function testClickHouse(): Promise<TestClickHouse> {
  shared ??= connect().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

async function connect(): Promise<TestClickHouse> {
  const dir = process.env.HAMSTRING_TEST_CLICKHOUSE_DIR;
  const httpPort = Number(process.env.HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT ?? STANDALONE_HTTP_PORT);
  const server = dir
    ? await LocalClickHouse.start({ dataDir: dir })
    : await LocalClickHouse.start({
        dataDir: defaultVarDir(`test-clickhouse-${httpPort}`),
        httpPort,
        tcpPort: httpPort + 1000,
      });
  return { url: server.url, server };
}
