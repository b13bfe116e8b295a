import { join } from 'node:path';
import { projectRoot } from '../../dev/paths.ts';
import { hostileProblems, hostileText, runHostile } from '../../verify/pipeline/hostile-run.ts';
import type { CommandInput, CommandIo } from '../command.ts';
import { intOption, stringOption } from '../options.ts';
import { VIOLATION, withVerifyRun, writeRunReport } from './verify-run.ts';

/** `hamstring verify --pipeline --hostile`: a clean phase, then the hostile mix; rates and the accounting. */
export function runHostileVerify(values: CommandInput['values'], io: CommandIo): Promise<number> {
  return withVerifyRun(values, { reports: 'hostile-reports', work: 'hostile' }, async (v) => {
    const lines = intOption(values, 'lines', 100, 100_000_000) ?? 20_000;
    const run = await runHostile({
      seed: Number.parseInt(stringOption(values, 'seed') ?? '1', 10) || 1,
      hosts: intOption(values, 'hosts', 4, 10_000) ?? 40,
      lines,
      cleanLines:
        intOption(values, 'clean-lines', 100, 100_000_000) ?? Math.max(5_000, Math.floor(lines / 5)),
      share: (intOption(values, 'hostile-percent', 0, 100) ?? 20) / 100,
      nearLimitEvery: intOption(values, 'near-limit-every', 0, 1_000_000) ?? 500,
      dir: join(v.workDir, 'run'),
      kafkaBasePort: v.port,
      clickhouse: v.clickhouse,
      database: 'verify_hostile',
      baseConfig: join(projectRoot, 'config.yaml'),
      log: (line) => io.err(`[verify --hostile] ${line}`),
    });
    const text = hostileText(run);
    writeRunReport(v.reportDir, 'hostile', text, run);
    io.out(text);
    io.out(`report in ${v.reportDir}`);
    return hostileProblems(run).length === 0 ? 0 : VIOLATION;
  });
}
