import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { defaultVarDir, projectRoot, resolveDataDir } from '../../dev/paths.ts';
import { hostileProblems, hostileText, runHostile } from '../../verify/pipeline/hostile-run.ts';
import type { CommandInput, CommandIo } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** Exit code of a run that found a problem (as for the other verifications). */
const VIOLATION = 4;
const DEFAULT_PORT = 25092;

/** `hamstring verify --pipeline --hostile`: a clean phase, then the hostile mix; rates and the accounting. */
export async function runHostileVerify(values: CommandInput['values'], io: CommandIo): Promise<number> {
  const port = intOption(values, 'port', 1024, 60_000) ?? DEFAULT_PORT;
  const dir = stringOption(values, 'report-dir');
  const reportDir = dir
    ? resolveDataDir(dir)
    : defaultVarDir(join('verify', 'hostile-reports', new Date().toISOString().replace(/[:.]/g, '-')));
  const workDir = defaultVarDir(join('verify', 'hostile'));
  rmSync(workDir, { recursive: true, force: true });
  const chPort = intOption(values, 'clickhouse-port', 1024, 65_000) ?? port + 100;
  const clickhouse = await LocalClickHouse.start({
    dataDir: join(workDir, 'clickhouse'),
    httpPort: chPort,
    tcpPort: chPort + 1,
  });
  try {
    const lines = intOption(values, 'lines', 100, 100_000_000) ?? 20_000;
    const run = await runHostile({
      seed: Number.parseInt(stringOption(values, 'seed') ?? '1', 10) || 1,
      hosts: intOption(values, 'hosts', 4, 10_000) ?? 40,
      lines,
      cleanLines:
        intOption(values, 'clean-lines', 100, 100_000_000) ?? Math.max(5_000, Math.floor(lines / 5)),
      share: (intOption(values, 'hostile-percent', 0, 100) ?? 20) / 100,
      nearLimitEvery: intOption(values, 'near-limit-every', 0, 1_000_000) ?? 500,
      dir: join(workDir, 'run'),
      kafkaBasePort: port,
      clickhouse,
      database: 'verify_hostile',
      baseConfig: join(projectRoot, 'config.yaml'),
      log: (line) => io.err(`[verify --hostile] ${line}`),
    });
    const text = hostileText(run);
    mkdirSync(reportDir, { recursive: true });
    writeFileSync(join(reportDir, 'hostile.md'), text);
    writeFileSync(join(reportDir, 'hostile.json'), `${JSON.stringify(run, null, 2)}\n`);
    io.out(text);
    io.out(`report in ${reportDir}`);
    return hostileProblems(run).length === 0 ? 0 : VIOLATION;
  } finally {
    await clickhouse.stop();
  }
}
