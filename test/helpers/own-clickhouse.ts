import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../src/dev/clickhouse-server.ts';
import { projectRoot } from '../../src/dev/paths.ts';
import type { TestClickHouse } from './clickhouse-fixture.ts';

/**
 * A fresh ClickHouse for one test file that kills, freezes or restarts its server, so that its
 * faults hit nothing else (scripts/integration-lanes.ts runs it beside other files). HTTP at
 * HAMSTRING_TEST_KAFKA_PORT (the run's base port, 21092 when a file runs by hand) plus `offset`, TCP
 * one above, in var/test/clickhouse-<name>, wiped first. The caller stops it.
 */
export async function startOwnClickHouse(name: string, offset: number): Promise<TestClickHouse> {
  const dataDir = join(projectRoot, 'var', 'test', `clickhouse-${name}`);
  await LocalClickHouse.attach(dataDir)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const httpPort = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + offset;
  const server = await LocalClickHouse.start({ dataDir, httpPort, tcpPort: httpPort + 1 });
  return { url: server.url, server };
}
