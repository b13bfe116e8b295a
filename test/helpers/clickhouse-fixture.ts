import { LocalClickHouse } from '../../src/dev/clickhouse-server.ts';
import { defaultVarDir } from '../../src/dev/paths.ts';

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
