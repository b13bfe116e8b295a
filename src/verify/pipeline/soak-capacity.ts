/**
 * The pipeline's capacity as the soak runs it: the same environment (every stage and the agent as a
 * process of its own, one broker, ClickHouse), no faults, fed in steps of rising rate. A step is
 * sustained when, at its end, every stage together is less than {@link BACKLOG_SECONDS} of input
 * behind; the ramp stops at the first step that is not, and the capacity is the last sustained
 * rate. The soak then runs at about half of it.
 */
import { rmSync } from 'node:fs';
import { generateTraffic } from '../../traffic/index.ts';
import { feedPaced, markedLines, type TimedLine } from './feed.ts';
import { PipelineEnvironment, type PipelineEnvironmentOptions } from './pipeline-environment.ts';
import { processUsage } from './soak-sampler.ts';
import { groupLag, stageGroups } from './stage-groups.ts';

/** Backlog allowed at a step's end, in seconds of its input: stages commit a transaction at a time. */
const BACKLOG_SECONDS = 3;

export interface CapacityOptions extends Omit<PipelineEnvironmentOptions, 'inspectors' | 'faults'> {
  readonly hosts: number;
  /** Lines per second of each step, rising. */
  readonly steps: readonly number[];
  readonly stepSeconds: number;
  readonly hostileEvery: number;
  readonly log: (line: string) => void;
}

export interface CapacityStep {
  readonly rate: number;
  readonly lines: number;
  /** Records behind per stage at the step's end. */
  readonly lagAtEnd: Readonly<Record<string, number>>;
  /** CPU per process over the step, % of one core. */
  readonly cpuPercent: Readonly<Record<string, number>>;
  readonly sustained: boolean;
}

export interface CapacityRun {
  readonly seed: number;
  readonly stepSeconds: number;
  readonly steps: readonly CapacityStep[];
  /** The last sustained rate (lines/s); 0 when not even the first step was. */
  readonly capacity: number;
  readonly durationMs: number;
}

/** One step's lines, at its rate, its event time starting when the step does. */
function stepLines(o: CapacityOptions, k: number, rate: number, startMs: number): Generator<TimedLine> {
  const traffic = generateTraffic({
    seed: o.seed + k,
    hosts: o.hosts,
    rate,
    durationSeconds: o.stepSeconds,
    startMs,
  });
  return markedLines(traffic, o.hostileEvery);
}

/** Runs the ramp (see the header); stops at the first step not sustained. */
export async function measureCapacity(o: CapacityOptions): Promise<CapacityRun> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const env = await PipelineEnvironment.start({ ...o, inspectors: 'shipped', faults: false });
  const groups = stageGroups(env.config, env.layout);
  const steps: CapacityStep[] = [];
  try {
    const input = await env.startPipeline();
    for (const [k, rate] of o.steps.entries()) {
      const cpuBefore = cpuTimes(env);
      const stepStart = Date.now();
      const lines = await feedPaced(
        env.cluster.bootstrapServers,
        input,
        stepLines(o, k, rate, stepStart),
        (l) => l.atMs - stepStart,
      );
      // The feed may end early (its last lines' event time) or late (it could not keep up).
      const wait = stepStart + o.stepSeconds * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const elapsedS = (Date.now() - stepStart) / 1000;
      const lagAtEnd: Record<string, number> = {};
      for (const [label, g] of groups)
        lagAtEnd[label] = await groupLag(env.admin, g.group, g.topics, 10_000).catch(() => -1);
      const cpuPercent: Record<string, number> = {};
      for (const [label, after] of cpuTimes(env)) {
        const before = cpuBefore.get(label);
        if (before !== undefined) cpuPercent[label] = (100 * (after - before)) / elapsedS;
      }
      const behind = Object.values(lagAtEnd).reduce((a, b) => a + Math.max(0, b), 0);
      const sustained =
        elapsedS < o.stepSeconds * 1.1 &&
        Object.values(lagAtEnd).every((l) => l >= 0) &&
        behind <= rate * BACKLOG_SECONDS;
      steps.push({ rate, lines, lagAtEnd, cpuPercent, sustained });
      o.log(
        `capacity: step ${k + 1} at ${rate} lines/s: ${lines} lines in ${elapsedS.toFixed(1)} s, ` +
          `${behind} records behind: ${sustained ? 'sustained' : 'NOT sustained'}`,
      );
      if (!sustained) break;
    }
  } finally {
    await env.close();
  }
  const capacity = [...steps].reverse().find((s) => s.sustained)?.rate ?? 0;
  return { seed: o.seed, stepSeconds: o.stepSeconds, steps, capacity, durationMs: Date.now() - began };
}

function cpuTimes(env: PipelineEnvironment): Map<string, number> {
  const times = new Map<string, number>();
  for (const label of env.processes.labels()) {
    const pid = env.processes.pid(label);
    const usage = pid === undefined ? undefined : processUsage(pid);
    if (usage !== undefined) times.set(label, usage.cpuSeconds);
  }
  return times;
}

/** The ramp as markdown: one row per step, lag per stage, CPU per process. */
export function capacityText(run: CapacityRun): string {
  const stages = [...new Set(run.steps.flatMap((s) => Object.keys(s.lagAtEnd)))];
  const procs = [...new Set(run.steps.flatMap((s) => Object.keys(s.cpuPercent)))];
  return [
    `# Pipeline capacity (the soak's processes, no faults): ${run.capacity} lines/s`,
    '',
    `Steps of ${run.stepSeconds} s; a step is sustained when every stage together is less than ` +
      `${BACKLOG_SECONDS} s of its input behind at its end. Run took ${(run.durationMs / 1000).toFixed(0)} s.`,
    '',
    `| lines/s | lines | sustained | ${stages.map((s) => `lag ${s}`).join(' | ')} |`,
    `|---|---|---|${stages.map(() => '---').join('|')}|`,
    ...run.steps.map(
      (s) =>
        `| ${s.rate} | ${s.lines} | ${s.sustained ? 'yes' : 'no'} | ${stages.map((l) => s.lagAtEnd[l] ?? '-').join(' | ')} |`,
    ),
    '',
    `| lines/s | ${procs.map((p) => `CPU % ${p}`).join(' | ')} |`,
    `|---|${procs.map(() => '---').join('|')}|`,
    ...run.steps.map(
      (s) => `| ${s.rate} | ${procs.map((p) => (s.cpuPercent[p] ?? 0).toFixed(0)).join(' | ')} |`,
    ),
    '',
  ].join('\n');
}
