import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { defaultVarDir, resolveDataDir } from '../../dev/paths.ts';
import type { CommandInput } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** Exit code of a verification run that found a problem. */
export const VIOLATION = 4;
const DEFAULT_PORT = 25092;

/** What a whole-pipeline verification run (soak, capacity ramp, hostile mix) works with. */
export interface VerifyRun {
  /** The first Kafka port of the run's broker (`--port`). */
  readonly port: number;
  /** Where the report goes: `--report-dir`, or a timestamped folder under var/verify/<reports>. */
  readonly reportDir: string;
  /** The run's own work folder, emptied at the start. */
  readonly workDir: string;
  readonly clickhouse: LocalClickHouse;
}

/**
 * Runs `body` with a fresh work folder under var/verify/<work> and a ClickHouse of its own
 * (`--clickhouse-port`, default `--port` + 100), stopped however the body ends.
 */
export async function withVerifyRun<T>(
  values: CommandInput['values'],
  folders: { reports: string; work: string },
  body: (run: VerifyRun) => Promise<T>,
): Promise<T> {
  const port = intOption(values, 'port', 1024, 60_000) ?? DEFAULT_PORT;
  const dir = stringOption(values, 'report-dir');
  const reportDir = dir
    ? resolveDataDir(dir)
    : defaultVarDir(join('verify', folders.reports, new Date().toISOString().replace(/[:.]/g, '-')));
  const workDir = defaultVarDir(join('verify', folders.work));
  rmSync(workDir, { recursive: true, force: true });
  const chPort = intOption(values, 'clickhouse-port', 1024, 65_000) ?? port + 100;
  const clickhouse = await LocalClickHouse.start({
    dataDir: join(workDir, 'clickhouse'),
    httpPort: chPort,
    tcpPort: chPort + 1,
  });
  try {
    return await body({ port, reportDir, workDir, clickhouse });
  } finally {
    await clickhouse.stop();
  }
}

/** Writes `<name>.md` and `<name>.json` into the report folder. */
export function writeRunReport(reportDir: string, name: string, text: string, data: unknown): void {
  mkdirSync(reportDir, { recursive: true });
  writeFileSync(join(reportDir, `${name}.md`), text);
  writeFileSync(join(reportDir, `${name}.json`), `${JSON.stringify(data, null, 2)}\n`);
}
