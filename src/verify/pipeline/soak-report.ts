import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SoakRun } from './soak.ts';
import { timeSeriesSvg, type Series } from './soak-chart.ts';
import { soakFigures, type SoakFigures } from './soak-figures.ts';

const f0 = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(0));
const f1 = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));

/** The report's problems: a stuck pipeline, an agent behind, a process that died by itself, a fault not injected or never recovered from. */
export function soakProblems(run: SoakRun, figures: SoakFigures): string[] {
  return [
    ...run.stagesBehind.map((g) => `a stage never read its inputs to the end: ${g}`),
    ...(run.agentBehind.length === 0
      ? []
      : [`the monitoring agent had not copied every row: ${run.agentBehind.join(', ')}`]),
    ...run.unexpectedExits.map((e) => `${e.label} exited by itself (code ${e.code}, signal ${e.signal})`),
    ...run.faults.flatMap((f) => (f.error ? [`fault ${f.kind} ${f.target} failed: ${f.error}`] : [])),
    ...figures.faults
      .filter((f) => f.recoveredAfterSeconds === undefined)
      .map((f) => `lag never back to its level before ${f.kind} ${f.target} (+${f.atSeconds.toFixed(0)} s)`),
  ];
}

/** The soak as markdown: the figures the issue names, then the pictures beside it. */
export function soakText(run: SoakRun, figures: SoakFigures, problems: readonly string[]): string {
  return [
    `# Pipeline soak: ${run.minutes} min at ${run.rate} lines/s, seed ${run.seed}: ${problems.length === 0 ? 'passed' : 'FAILED'}`,
    '',
    `${run.linesFed} lines fed; ${run.faults.length} faults (the schedule of every kind, again every 5 minutes); ` +
      `a sample every ${run.sampleMs / 1000} s; all processes together used ${figures.meanCpuPercent.toFixed(0)} % of one core on average ` +
      `(this machine has two). Alert latency (from the line that completed an alert entering Kafka to the detector's alert): ` +
      `median ${f0(figures.alertMedianMs)} ms, p99 ${f0(figures.alertP99Ms)} ms over ${run.alerts.length} alerts.` +
      (run.networkCutSkipped ? ` No network cut: ${run.networkCutSkipped}.` : ''),
    '',
    '## Memory (RSS)',
    '',
    '| process | peak MiB | last MiB | slope after warm-up, MiB/h |',
    '|---|---|---|---|',
    ...figures.memory.map(
      (m) => `| ${m.label} | ${f0(m.peakMiB)} | ${f0(m.lastMiB)} | ${f1(m.slopeMiBPerHour)} |`,
    ),
    '',
    '![RSS](rss.svg)',
    '![CPU](cpu.svg)',
    '',
    '## Each fault: backlog and alerts',
    '',
    '| at | fault | peak lag (records) | lag back after | alerts until the next fault | their p99 latency |',
    '|---|---|---|---|---|---|',
    ...figures.faults.map(
      (f) =>
        `| +${f.atSeconds.toFixed(0)} s | ${f.kind} ${f.target} | ${f.peakLag} | ` +
        `${f.recoveredAfterSeconds === undefined ? 'never' : `${f.recoveredAfterSeconds.toFixed(0)} s`} | ` +
        `${f.alerts} | ${f.alertP99Ms === undefined ? '-' : `${f.alertP99Ms.toFixed(0)} ms`} |`,
    ),
    '',
    '![lag](lag.svg)',
    '![alert latency](latency.svg)',
    '',
    ...(problems.length > 0 ? ['## Problems', '', ...problems.map((p) => `- ${p}`), ''] : []),
  ].join('\n');
}

/** `soak.md`, `soak.json` and the four pictures in `dir`; returns the markdown. */
export function writeSoakReport(dir: string, run: SoakRun): { text: string; ok: boolean } {
  mkdirSync(dir, { recursive: true });
  const figures = soakFigures(run.samples, run.faults, run.alerts);
  const problems = soakProblems(run, figures);
  const text = soakText(run, figures, problems);
  const faults = run.faults.map((f) => ({ atMs: f.injectedAt, label: `${f.kind} ${f.target}` }));
  const per = (
    pick: (s: SoakRun['samples'][number]) => readonly { label: string; value: number }[],
  ): Series[] => {
    const byLabel = new Map<string, { x: number; y: number }[]>();
    for (const s of run.samples)
      for (const v of pick(s))
        byLabel.set(v.label, [...(byLabel.get(v.label) ?? []), { x: s.atMs, y: v.value }]);
    return [...byLabel].map(([label, points]) => ({ label, points }));
  };
  const charts = {
    'rss.svg': timeSeriesSvg({
      title: 'Resident memory per process',
      yLabel: 'MiB',
      faults,
      series: per((s) => s.processes.map((p) => ({ label: p.label, value: p.rssMiB }))),
    }),
    'cpu.svg': timeSeriesSvg({
      title: 'CPU per process (% of one core)',
      yLabel: '%',
      faults,
      series: per((s) => s.processes.map((p) => ({ label: p.label, value: p.cpuPercent }))),
    }),
    'lag.svg': timeSeriesSvg({
      title: 'Consumer lag per stage (records)',
      yLabel: 'records',
      faults,
      series: per((s) => s.lags.map((l) => ({ label: l.label, value: l.lag }))),
    }),
    'latency.svg': timeSeriesSvg({
      title: 'Alert latency',
      yLabel: 'ms',
      faults,
      dots: true,
      series: [...new Set(run.alerts.map((a) => a.detector))].map((d) => ({
        label: d,
        points: run.alerts.filter((a) => a.detector === d).map((a) => ({ x: a.atMs, y: a.latencyMs })),
      })),
    }),
  };
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(dir, name), svg);
  writeFileSync(join(dir, 'soak.json'), `${JSON.stringify({ ...run, figures, problems }, null, 2)}\n`);
  writeFileSync(join(dir, 'soak.md'), text);
  return { text, ok: problems.length === 0 };
}
