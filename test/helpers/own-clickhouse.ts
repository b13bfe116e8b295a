import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickHouseSecurity } from '../../src/dev/clickhouse-config.ts';
import { LocalClickHouse } from '../../src/dev/clickhouse-server.ts';
import { projectRoot } from '../../src/dev/paths.ts';
import type { TestClickHouse } from './clickhouse-fixture.ts';

/**
 * A fresh ClickHouse for one test file that kills, freezes or restarts its server, so that its
 * faults hit nothing else (scripts/integration-lanes.ts runs it beside other files). HTTP at
 * HAMSTRING_TEST_KAFKA_PORT (the run's base port, 21092 when a file runs by hand) plus `offset`, TCP
 * one above, in var/test/clickhouse-<name>, wiped first. The caller stops it. `security`: users with
 * passwords and an HTTPS port (see ClickHouseSecurity).
 */
/** Base HTTP port of {@link startOwnClickHouse} for `offset`, to place an HTTPS port beside it. */
export function ownClickHousePort(offset: number): number {
  return Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + offset;
}

export async function startOwnClickHouse(
  name: string,
  offset: number,
  security?: ClickHouseSecurity,
): Promise<TestClickHouse> {
  const dataDir = join(projectRoot, 'var', 'test', `clickhouse-${name}`);
  await LocalClickHouse.attach(dataDir)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const httpPort = ownClickHousePort(offset);
  const server = await LocalClickHouse.start({
    dataDir,
    httpPort,
    tcpPort: httpPort + 1,
    ...(security ? { security } : {}),
  });
  return { url: server.url, server };
}
