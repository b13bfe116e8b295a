import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import type { TrafficShape } from './feed.ts';
import { runPipeline, type PipelineRunReport } from './run-pipeline.ts';

export interface PipelineVerifyOptions {
  readonly seed: number;
  readonly traffic: Omit<TrafficShape, 'seed'>;
  readonly feedMs: number;
  /** The runs' brokers, ClickHouse, configs and logs; wiped first. */
  readonly workDir: string;
  readonly kafkaBasePort: number;
  readonly clickhouseHttpPort: number;
  readonly clickhouseTcpPort: number;
  readonly baseConfig: string;
  readonly inspectors: 'shipped' | 'pass-all';
  readonly reportDir?: string;
  readonly log: (line: string) => void;
}

export interface PipelineVerdict {
  readonly seed: number;
  readonly ok: boolean;
  readonly problems: readonly string[];
  /** The alerted hosts of the run with faults equal those of the run without. */
  readonly alertedHostsEqual: boolean;
  readonly baseline: PipelineRunReport;
  readonly faulted: PipelineRunReport;
}

/**
 * `hamstring verify --pipeline`: the seed's traffic through the whole pipeline twice, each time on a
 * fresh broker: once without faults, once with the seed's fault schedule. Both runs must account for
 * every line (line-fates.ts), and the faulted run must alert exactly the hosts the other one did.
 */
export async function verifyPipeline(o: PipelineVerifyOptions): Promise<PipelineVerdict> {
  rmSync(o.workDir, { recursive: true, force: true });
  mkdirSync(o.workDir, { recursive: true });
  const clickhouse = await LocalClickHouse.start({
    dataDir: join(o.workDir, 'clickhouse'),
    httpPort: o.clickhouseHttpPort,
    tcpPort: o.clickhouseTcpPort,
  });
  try {
    // The work folder goes with the next run: each process's log of each run is kept with the report.
    const keepLogs = (faults: boolean) => {
      const from = join(o.workDir, faults ? 'faults' : 'baseline', 'logs');
      if (o.reportDir !== undefined && existsSync(from))
        cpSync(from, join(o.reportDir, 'logs', `seed-${o.seed}-${faults ? 'faults' : 'baseline'}`), {
          recursive: true,
        });
    };
    const run = (faults: boolean) =>
      runPipeline({
        seed: o.seed,
        traffic: { ...o.traffic, seed: o.seed },
        feedMs: o.feedMs,
        faults,
        dir: join(o.workDir, faults ? 'faults' : 'baseline'),
        kafkaBasePort: o.kafkaBasePort,
        clickhouse,
        database: `verify_pipeline_${o.seed}_${faults ? 'faults' : 'baseline'}`,
        baseConfig: o.baseConfig,
        inspectors: o.inspectors,
        log: o.log,
      }).finally(() => keepLogs(faults));
    const baseline = await run(false);
    const faulted = await run(true);
    const verdict = judge(o.seed, baseline, faulted);
    if (o.reportDir) writeReport(o.reportDir, verdict);
    return verdict;
  } finally {
    await clickhouse.stop();
  }
}

function runProblems(name: string, r: PipelineRunReport): string[] {
  return [
    ...r.accounting.problems.map((p) => `${name}: ${p}`),
    ...r.stagesBehind.map((g) => `${name}: a stage never read its inputs to the end: ${g}`),
    ...(r.agentBehind.length === 0
      ? []
      : [
          `${name}: the monitoring agent had not copied every row at the deadline: ${r.agentBehind.join(', ')}`,
        ]),
    ...r.unexpectedExits.map(
      (e) => `${name}: ${e.label} exited by itself (code ${e.code}, signal ${e.signal})`,
    ),
    ...r.faults.flatMap((f) => (f.error ? [`${name}: fault ${f.kind} ${f.target} failed: ${f.error}`] : [])),
  ];
}

export function judge(
  seed: number,
  baseline: PipelineRunReport,
  faulted: PipelineRunReport,
): PipelineVerdict {
  const a = baseline.accounting.alertedHosts;
  const b = faulted.accounting.alertedHosts;
  const alertedHostsEqual = a.length === b.length && a.every((h, i) => h === b[i]);
  const problems = [
    ...runProblems('without faults', baseline),
    ...runProblems('with faults', faulted),
    ...(alertedHostsEqual
      ? []
      : [
          `alerted hosts differ: without faults ${a.join(', ') || 'none'}; with faults ${b.join(', ') || 'none'}`,
        ]),
  ];
  return { seed, ok: problems.length === 0, problems, alertedHostsEqual, baseline, faulted };
}

/** `<seed>.json` (everything) and `<seed>.md` (what a reader wants first). */
function writeReport(dir: string, v: PipelineVerdict): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `seed-${v.seed}.json`), `${JSON.stringify(v, null, 2)}\n`);
  writeFileSync(join(dir, `seed-${v.seed}.md`), pipelineVerdictText(v));
}

/** The verdict as a short text: the faults, then each run's accounting. */
export function pipelineVerdictText(v: PipelineVerdict): string {
  const acc = (r: PipelineRunReport) => {
    const a = r.accounting;
    const fates = Object.entries(a.fates)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const paths = a.paths
      .map(
        (p) =>
          `    - ${p.path}: ${Object.entries(p.fates)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}; lost ${p.lost.length}`,
      )
      .join('\n');
    return (
      `${r.lines} lines: ${fates}; lost ${a.lost.length}, in two batches ${a.inTwoBatches.length}, ` +
      `batches inspected twice ${a.batchesInspectedTwice.length}, alerts twice ${a.alertsTwice.length}, ` +
      `monitoring rows missing ${a.monitoringMissing.length} / twice ${a.monitoringTwice.length}; ` +
      `alerted hosts ${a.alertedHosts.join(', ') || 'none'} (${(r.durationMs / 1000).toFixed(0)} s)\n${paths}`
    );
  };
  return [
    `# hamstring verify --pipeline --seed ${v.seed}: ${v.ok ? 'passed' : 'FAILED'}`,
    '',
    '## Faults injected',
    ...v.faulted.faults.map(
      (f) =>
        `- +${(f.atActualMs / 1000).toFixed(1)} s ${f.kind} ${f.target}, ` +
        `${((f.restoredAt - f.injectedAt) / 1000).toFixed(1)} s${f.error ? ` (FAILED: ${f.error})` : ''}`,
    ),
    ...(v.faulted.networkCutSkipped === undefined
      ? []
      : [`- no network cut: ${v.faulted.networkCutSkipped}`]),
    '',
    '## Accounting',
    `- without faults: ${acc(v.baseline)}`,
    `- with faults: ${acc(v.faulted)}`,
    `- infected hosts (generator): ${v.faulted.infectedHosts.join(', ')}`,
    `- alerted hosts equal: ${v.alertedHostsEqual ? 'yes' : 'NO'}`,
    '',
    ...(v.problems.length > 0 ? ['## Problems', ...v.problems.map((p) => `- ${p}`), ''] : []),
  ].join('\n');
}
