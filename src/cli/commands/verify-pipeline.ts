import { join } from 'node:path';
import { defaultVarDir, projectRoot, resolveDataDir } from '../../dev/paths.ts';
import { pipelineVerdictText, verifyPipeline } from '../../verify/pipeline/verify-pipeline.ts';
import { UsageError, type CommandInput, type CommandIo } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** Exit code when a seed found lines lost or doubled, or other hosts alerted (as for the runtime's verify). */
const VIOLATION = 4;
/** Base ports of the run's own broker and ClickHouse, apart from `hamstring up`'s and the tests'. */
const DEFAULT_PORT = 25092;

function seedsOf(raw: string | undefined): number[] {
  if (raw === undefined) return [1];
  const seeds = raw.split(',').map((s) => s.trim());
  if (seeds.some((s) => !/^\d+$/.test(s)))
    throw new UsageError(`--seed must be a number or a comma list of numbers, got '${raw}'`);
  return seeds.map(Number);
}

/** `hamstring verify --pipeline`: one verdict per seed; exit 4 when any seed failed. */
export async function runPipelineVerify(values: CommandInput['values'], io: CommandIo): Promise<number> {
  const inspectors = stringOption(values, 'inspectors') ?? 'shipped';
  if (inspectors !== 'shipped' && inspectors !== 'pass-all')
    throw new UsageError(`--inspectors must be shipped or pass-all, got '${inspectors}'`);
  const port = intOption(values, 'port', 1024, 60_000) ?? DEFAULT_PORT;
  const chPort = intOption(values, 'clickhouse-port', 1024, 65_000) ?? port + 100;
  const durationSeconds = intOption(values, 'duration', 10, 86_400) ?? 60;
  const dir = stringOption(values, 'report-dir');
  const reportDir = dir
    ? resolveDataDir(dir)
    : defaultVarDir(join('verify', 'pipeline-reports', new Date().toISOString().replace(/[:.]/g, '-')));
  let failed = 0;
  for (const seed of seedsOf(stringOption(values, 'seed'))) {
    const verdict = await verifyPipeline({
      seed,
      traffic: {
        hosts: intOption(values, 'hosts', 4, 10_000) ?? 40,
        rate: intOption(values, 'rate', 1, 100_000) ?? 100,
        durationSeconds,
        hostileEvery: intOption(values, 'hostile-every', 0, 1_000_000) ?? 20,
      },
      feedMs: durationSeconds * 1000,
      workDir: defaultVarDir(join('verify', 'pipeline')),
      kafkaBasePort: port,
      clickhouseHttpPort: chPort,
      clickhouseTcpPort: chPort + 1,
      baseConfig: join(projectRoot, 'config.yaml'),
      inspectors,
      reportDir,
      log: (line) => io.err(`[verify --pipeline] ${line}`),
    });
    io.out(pipelineVerdictText(verdict));
    if (!verdict.ok) failed += 1;
  }
  io.out(`reports in ${reportDir}`);
  return failed > 0 ? VIOLATION : 0;
}
