import { join } from 'node:path';
import { defaultVarDir, resolveDataDir } from '../../dev/paths.ts';
import { markdownTable } from '../../verify/report.ts';
import { runPipelineVerify } from './verify-pipeline.ts';
import { runHostileVerify } from './verify-hostile.ts';
import { runSoakVerify } from './verify-soak.ts';
import { DEFAULT_VERIFY_BASE_PORT, runVerify, scenarioNames } from '../../verify/run.ts';
import { UsageError, type Command } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** Exit code when a scenario found a violation (1 stays "the command failed"). */
const VIOLATION = 4;

export const verifyCommand: Command = {
  usage:
    '(--bootstrap S | --local 1|3) [--records N] [--workers M] [--scenario name|all] [--report-dir D] [--soak-seconds S] [--seed X] [--port P] [--data-dir D]\n' +
    '       hamstring verify --pipeline [--seed X[,Y...]] [--hosts N] [--rate R] [--duration S] [--hostile-every N] [--inspectors shipped|pass-all] [--port P] [--report-dir D]\n' +
    '       hamstring verify --pipeline --soak [--minutes M] [--rate R] [--hosts N] [--seed X] [--sample-seconds S] [--port P] [--clickhouse-port H] [--report-dir D]\n' +
    '       hamstring verify --pipeline --hostile [--lines N] [--clean-lines N] [--hostile-percent P] [--near-limit-every N] [--seed X] [--port P] [--clickhouse-port H] [--report-dir D]\n' +
    '       hamstring verify --pipeline --soak --capacity [--steps R1,R2,...] [--step-seconds S] [--port P] [--clickhouse-port H] [--report-dir D]',
  help: [
    "--pipeline      the whole pipeline instead of the runtime: each seed's traffic through the six",
    '                stages and the monitoring agent as processes of their own, on a local broker and',
    '                ClickHouse of its own (var/verify/pipeline), once without and once with faults',
    '                (kill -9 of every stage and the agent, a stage stopped past its session timeout,',
    '                broker and ClickHouse kill -9); every line must end in exactly one fate and the',
    '                same hosts must be alerted. --hosts (default 40), --rate lines/s (100), --duration',
    '                s of traffic and of the feed (60), --hostile-every (20: one invalid line per 20),',
    '                --inspectors (shipped)',
    '--soak          with --pipeline: one long run at a steady rate (--rate, default 100 lines/s from',
    '                --hosts 40) for --minutes (30), the fault schedule again every 5 minutes; memory',
    '                and CPU of every process and the lag of every stage sampled every --sample-seconds',
    "                (10), every alert's latency; soak.md with SVG plots in --report-dir",
    '--hostile       with --pipeline: no faults but hostile input: --clean-lines valid lines (default',
    '                --lines / 5), then --lines (20000) with --hostile-percent (20) bad ones of every kind',
    "                (one in --near-limit-every 500 near Kafka's size limit), each phase as fast as the",
    "                feed writes; per stage the rate in both, every line's fate; hostile.md in --report-dir",
    '--capacity      with --soak: no soak but its capacity: the same processes, no faults, fed in',
    '                --steps (lines/s, default 500,1000,1500,2000,3000,4000,6000,8000) of --step-seconds',
    '                (30) until a step leaves more than 3 s of input behind; capacity.md in --report-dir',
    "--clickhouse-port  with --pipeline: HTTP port of the run's ClickHouse (TCP: the next one);",
    '                default --port + 100',
    '--bootstrap     the cluster to verify against (topics verify-* are created there)',
    '--local         start (or attach to) a local 1- or 3-node cluster in var/verify/kafka-<n>',
    `--port          base port of the local cluster; default ${DEFAULT_VERIFY_BASE_PORT}`,
    '--data-dir      data dir of the local cluster; default var/verify/kafka-<n> (another one runs a second local run at once)',
    '--records       records seeded per scenario; default 10000',
    '--workers       worker processes per stage; default 2',
    `--scenario      one of ${scenarioNames().join(', ')}, or all (default); several as a comma list`,
    '--report-dir    default var/verify/reports/<time>; <scenario>.json/.md and summary.md',
    '--soak-seconds  fault phase of the soak scenario; default 120',
    '--seed          seed of the abort dice and the soak; default 1',
    'Without --local only worker faults, the chain and the abort hook apply; broker faults need --local',
    '(broker-sigstop: --local 1; broker-restart, broker-bounce: --local 3). network-cut needs --local 1',
    'and root: its workers run in a network namespace of their own whose link to Kafka is cut.',
    `Exit code ${VIOLATION} when a scenario found a violation of exactly-once.`,
  ].join('\n'),
  options: {
    bootstrap: { type: 'string', short: 'b' },
    local: { type: 'string' },
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    records: { type: 'string', short: 'n' },
    workers: { type: 'string', short: 'w' },
    scenario: { type: 'string', short: 's' },
    'report-dir': { type: 'string' },
    'soak-seconds': { type: 'string' },
    seed: { type: 'string' },
    pipeline: { type: 'boolean' },
    soak: { type: 'boolean' },
    capacity: { type: 'boolean' },
    hostile: { type: 'boolean' },
    lines: { type: 'string' },
    'clean-lines': { type: 'string' },
    'hostile-percent': { type: 'string' },
    'near-limit-every': { type: 'string' },
    steps: { type: 'string' },
    'step-seconds': { type: 'string' },
    'clickhouse-port': { type: 'string' },
    minutes: { type: 'string' },
    'sample-seconds': { type: 'string' },
    hosts: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    'hostile-every': { type: 'string' },
    inspectors: { type: 'string' },
  },
  async run({ values, io }) {
    if (values.pipeline === true && values.soak === true) return runSoakVerify(values, io);
    if (values.pipeline === true && values.hostile === true) return runHostileVerify(values, io);
    if (values.hostile === true) throw new UsageError('--hostile goes with --pipeline');
    if (values.soak === true) throw new UsageError('--soak goes with --pipeline');
    if (values.pipeline === true) return runPipelineVerify(values, io);
    const local = intOption(values, 'local', 1, 3);
    if (local !== undefined && local !== 1 && local !== 3) throw new UsageError('--local must be 1 or 3');
    const bootstrap = stringOption(values, 'bootstrap');
    if (local === undefined && bootstrap === undefined)
      throw new UsageError('--bootstrap or --local is required');
    const dir = stringOption(values, 'report-dir');
    const reportDir = dir
      ? resolveDataDir(dir)
      : defaultVarDir(join('verify', 'reports', new Date().toISOString().replace(/[:.]/g, '-')));
    const soak = intOption(values, 'soak-seconds', 10, 86_400);
    const seed = intOption(values, 'seed', 0, 2 ** 31);
    const port = intOption(values, 'port', 1024, 65000);
    const dataDir = stringOption(values, 'data-dir');
    const { reports, skipped } = await runVerify({
      ...(bootstrap !== undefined ? { bootstrap } : {}),
      ...(local !== undefined ? { local } : {}),
      ...(port !== undefined ? { basePort: port } : {}),
      ...(dataDir !== undefined ? { dataDir: resolveDataDir(dataDir) } : {}),
      records: intOption(values, 'records', 1, 100_000_000) ?? 10_000,
      workers: intOption(values, 'workers', 1, 64) ?? 2,
      scenarios: (stringOption(values, 'scenario') ?? 'all').split(','),
      reportDir,
      ...(soak !== undefined ? { soakMs: soak * 1000 } : {}),
      ...(seed !== undefined ? { seed } : {}),
      log: (line) => io.err(`[verify] ${line}`),
    });
    io.out(markdownTable(reports));
    if (skipped.length > 0) io.out(`\nskipped: ${skipped.join(', ')}`);
    io.out(`\nreports in ${reportDir}`);
    return reports.every((r) => r.ok) ? 0 : VIOLATION;
  },
};
