import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { defaultVarDir, projectRoot, resolveDataDir } from '../../dev/paths.ts';
import { capacityText, measureCapacity } from '../../verify/pipeline/soak-capacity.ts';
import { runSoak } from '../../verify/pipeline/soak.ts';
import { writeSoakReport } from '../../verify/pipeline/soak-report.ts';
import type { CommandInput, CommandIo } from '../command.ts';
import { UsageError } from '../command.ts';
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
  const capacity = values.capacity === true;
  // Apart from the soak's: a capacity ramp may run while a soak does (on other ports).
  const workDir = defaultVarDir(join('verify', capacity ? 'soak-capacity' : 'soak'));
  rmSync(workDir, { recursive: true, force: true });
  const chPort = intOption(values, 'clickhouse-port', 1024, 65_000) ?? port + 100;
  const clickhouse = await LocalClickHouse.start({
    dataDir: join(workDir, 'clickhouse'),
    httpPort: chPort,
    tcpPort: chPort + 1,
  });
  try {
    const seedRaw = stringOption(values, 'seed') ?? '1';
    if (capacity) {
      const run = await measureCapacity({
        seed: Number.parseInt(seedRaw, 10) || 1,
        hosts: intOption(values, 'hosts', 4, 10_000) ?? 40,
        steps: stepsOf(stringOption(values, 'steps') ?? '500,1000,1500,2000,3000,4000,6000,8000'),
        stepSeconds: intOption(values, 'step-seconds', 5, 3_600) ?? 30,
        hostileEvery: intOption(values, 'hostile-every', 0, 1_000_000) ?? 20,
        dir: join(workDir, 'run'),
        kafkaBasePort: port,
        clickhouse,
        database: 'verify_soak_capacity',
        baseConfig: join(projectRoot, 'config.yaml'),
        log: (line) => io.err(`[verify --soak --capacity] ${line}`),
      });
      const text = capacityText(run);
      mkdirSync(reportDir, { recursive: true });
      writeFileSync(join(reportDir, 'capacity.md'), text);
      writeFileSync(join(reportDir, 'capacity.json'), `${JSON.stringify(run, null, 2)}\n`);
      io.out(text);
      io.out(`report in ${reportDir}`);
      return run.capacity > 0 ? 0 : VIOLATION;
    }
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

function stepsOf(raw: string): number[] {
  const steps = raw.split(',').map((s) => Number(s.trim()));
  if (steps.some((s) => !Number.isInteger(s) || s < 1))
    throw new UsageError(`--steps must be a comma list of lines/s, got '${raw}'`);
  return steps;
}
