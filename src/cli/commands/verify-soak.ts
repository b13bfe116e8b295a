import { join } from 'node:path';
import { projectRoot } from '../../dev/paths.ts';
import { capacityText, measureCapacity } from '../../verify/pipeline/soak-capacity.ts';
import { runSoak } from '../../verify/pipeline/soak.ts';
import { writeSoakReport } from '../../verify/pipeline/soak-report.ts';
import type { CommandInput, CommandIo } from '../command.ts';
import { UsageError } from '../command.ts';
import { intOption, stringOption } from '../options.ts';
import { VIOLATION, withVerifyRun, writeRunReport } from './verify-run.ts';

/** `hamstring verify --pipeline --soak`: one long run with repeating faults, a report with pictures. */
export function runSoakVerify(values: CommandInput['values'], io: CommandIo): Promise<number> {
  const capacity = values.capacity === true;
  // Apart from the soak's: a capacity ramp may run while a soak does (on other ports).
  const folders = { reports: 'soak-reports', work: capacity ? 'soak-capacity' : 'soak' };
  return withVerifyRun(values, folders, async (v) => {
    const seed = Number.parseInt(stringOption(values, 'seed') ?? '1', 10) || 1;
    const hosts = intOption(values, 'hosts', 4, 10_000) ?? 40;
    const hostileEvery = intOption(values, 'hostile-every', 0, 1_000_000) ?? 20;
    const where = { dir: join(v.workDir, 'run'), kafkaBasePort: v.port, clickhouse: v.clickhouse };
    const baseConfig = join(projectRoot, 'config.yaml');
    if (capacity) {
      const run = await measureCapacity({
        seed,
        hosts,
        steps: stepsOf(stringOption(values, 'steps') ?? '500,1000,1500,2000,3000,4000,6000,8000'),
        stepSeconds: intOption(values, 'step-seconds', 5, 3_600) ?? 30,
        hostileEvery,
        ...where,
        database: 'verify_soak_capacity',
        baseConfig,
        log: (line) => io.err(`[verify --soak --capacity] ${line}`),
      });
      const text = capacityText(run);
      writeRunReport(v.reportDir, 'capacity', text, run);
      io.out(text);
      io.out(`report in ${v.reportDir}`);
      return run.capacity > 0 ? 0 : VIOLATION;
    }
    const run = await runSoak({
      seed,
      hosts,
      rate: intOption(values, 'rate', 1, 100_000) ?? 100,
      minutes: intOption(values, 'minutes', 1, 1_440) ?? 30,
      hostileEvery,
      sampleMs: (intOption(values, 'sample-seconds', 1, 600) ?? 10) * 1000,
      ...where,
      database: 'verify_soak',
      baseConfig,
      log: (line) => io.err(`[verify --soak] ${line}`),
    });
    const report = writeSoakReport(v.reportDir, run);
    io.out(report.text);
    io.out(`report in ${v.reportDir}`);
    return report.ok ? 0 : VIOLATION;
  });
}

function stepsOf(raw: string): number[] {
  const steps = raw.split(',').map((s) => Number(s.trim()));
  if (steps.some((s) => !Number.isInteger(s) || s < 1))
    throw new UsageError(`--steps must be a comma list of lines/s, got '${raw}'`);
  return steps;
}
