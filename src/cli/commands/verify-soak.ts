import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { defaultVarDir, projectRoot, resolveDataDir } from '../../dev/paths.ts';
import { runSoak } from '../../verify/pipeline/soak.ts';
import { writeSoakReport } from '../../verify/pipeline/soak-report.ts';
import type { CommandInput, CommandIo } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** Exit code of a soak that found a problem (as for the other verifications). */
const VIOLATION = 4;
const DEFAULT_PORT = 25092;

/** `hamstring verify --pipeline --soak`: one long run with repeating faults, a report with pictures. */
export async function runSoakVerify(values: CommandInput['values'], io: CommandIo): Promise<number> {
  const port = intOption(values, 'port', 1024, 60_000) ?? DEFAULT_PORT;
  const dir = stringOption(values, 'report-dir');
  const reportDir = dir
    ? resolveDataDir(dir)
    : defaultVarDir(join('verify', 'soak-reports', new Date().toISOString().replace(/[:.]/g, '-')));
  const workDir = defaultVarDir(join('verify', 'soak'));
  rmSync(workDir, { recursive: true, force: true });
  const clickhouse = await LocalClickHouse.start({
    dataDir: join(workDir, 'clickhouse'),
    httpPort: port + 100,
    tcpPort: port + 101,
  });
  try {
    const seedRaw = stringOption(values, 'seed') ?? '1';
    const run = await runSoak({
      seed: Number.parseInt(seedRaw, 10) || 1,
      hosts: intOption(values, 'hosts', 4, 10_000) ?? 40,
      rate: intOption(values, 'rate', 1, 100_000) ?? 100,
      minutes: intOption(values, 'minutes', 1, 1_440) ?? 30,
      hostileEvery: intOption(values, 'hostile-every', 0, 1_000_000) ?? 20,
      sampleMs: (intOption(values, 'sample-seconds', 1, 600) ?? 10) * 1000,
      dir: join(workDir, 'run'),
      kafkaBasePort: port,
      clickhouse,
      database: 'verify_soak',
      baseConfig: join(projectRoot, 'config.yaml'),
      log: (line) => io.err(`[verify --soak] ${line}`),
    });
    const report = writeSoakReport(reportDir, run);
    io.out(report.text);
    io.out(`report in ${reportDir}`);
    return report.ok ? 0 : VIOLATION;
  } finally {
    await clickhouse.stop();
  }
}
