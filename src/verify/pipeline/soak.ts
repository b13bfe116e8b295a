import { rmSync } from 'node:fs';
import { decodeAlert } from '../../stages/index.ts';
import { generateTraffic } from '../../traffic/index.ts';
import { injectAll } from './fault-injection.ts';
import { feedPaced, markedLines } from './feed.ts';
import { faultSchedule, type InjectedFault, type PlannedFault } from './faults.ts';
import { layoutTopics } from './layout.ts';
import { PipelineEnvironment, type PipelineEnvironmentOptions } from './pipeline-environment.ts';
import { readTopics } from './read-pipeline.ts';
import { processUsage, type Sample } from './soak-sampler.ts';
import { groupLag, stageGroups } from './stage-groups.ts';

/** One fault schedule (every kind) per cycle; its faults fill the first part, the rest is recovery. */
const CYCLE_MS = 300_000;
const FAULT_SHARE = 0.6;

/** The environment's settings but the inspectors (the shipped ones) and faults (always). */
export interface SoakOptions extends Omit<PipelineEnvironmentOptions, 'inspectors' | 'faults'> {
  readonly hosts: number;
  /** Lines per second, fed at their event time (the generator's clock is the wall clock). */
  readonly rate: number;
  readonly minutes: number;
  readonly hostileEvery: number;
  readonly sampleMs: number;
  /** Kill -9 one stage per cycle, not each: every kind of fault once, for a short run. */
  readonly oneStageKill?: boolean;
  readonly log: (line: string) => void;
}

/** An alert as a detector raised it, and how long after the line that completed it entered Kafka. */
export interface AlertLatency {
  /** Since the soak began (ms). */
  readonly atMs: number;
  readonly detector: string;
  readonly latencyMs: number;
}

export interface SoakRun {
  readonly seed: number;
  readonly minutes: number;
  readonly rate: number;
  readonly linesFed: number;
  readonly sampleMs: number;
  readonly samples: readonly Sample[];
  /** Fault times are since the soak began, as the samples'. */
  readonly faults: readonly InjectedFault[];
  readonly networkCutSkipped?: string;
  readonly alerts: readonly AlertLatency[];
  /** Stage groups not at the end of their inputs at the settle deadline (empty: none). */
  readonly stagesBehind: readonly string[];
  readonly agentBehind: readonly string[];
  readonly unexpectedExits: readonly { label: string; code: number | null; signal: string | null }[];
  readonly durationMs: number;
}

/** The fault schedules of every whole cycle of a feed of `feedMs`, seed + cycle each. */
export function soakSchedule(
  seed: number,
  stages: readonly string[],
  feedMs: number,
  cutTarget?: string,
  oneStageKill = false,
): PlannedFault[] {
  const cycleMs = Math.min(CYCLE_MS, feedMs);
  const cycles = Math.max(1, Math.floor(feedMs / cycleMs));
  return Array.from({ length: cycles }, (_, c) =>
    faultSchedule(seed + c, stages, cycleMs * FAULT_SHARE, cutTarget, oneStageKill).map((f) => ({
      ...f,
      atMs: f.atMs + c * cycleMs,
    })),
  ).flat();
}

/**
 * The pipeline as processes at a steady rate for `minutes`, the fault schedule repeating every five
 * minutes, every process's memory and CPU and every stage's consumer lag sampled every `sampleMs`,
 * and the latency of every alert. The exactly-once accounting is `verify --pipeline`'s: a soak's
 * hours of lines are fed lazily and never held.
 */
export async function runSoak(o: SoakOptions): Promise<SoakRun> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const env = await PipelineEnvironment.start({ ...o, inspectors: 'shipped', faults: true });
  const { admin, cluster, config, layout, processes } = env;
  const groups = stageGroups(config, layout);
  const samples: Sample[] = [];
  const cpuBefore = new Map<string, { pid: number; cpu: number; at: number }>();
  const sample = async (): Promise<void> => {
    const now = Date.now();
    const procs = processes.labels().flatMap((label) => {
      const pid = processes.pid(label);
      const usage = pid === undefined ? undefined : processUsage(pid);
      if (pid === undefined || usage === undefined) return [];
      const before = cpuBefore.get(label);
      cpuBefore.set(label, { pid, cpu: usage.cpuSeconds, at: now });
      // A restarted process counts from its start: its whole CPU time falls in this interval.
      const spent = before?.pid === pid ? usage.cpuSeconds - before.cpu : usage.cpuSeconds;
      const interval = before === undefined ? o.sampleMs : now - before.at;
      return [{ label, rssMiB: usage.rssMiB, cpuPercent: (100 * spent * 1000) / Math.max(1, interval) }];
    });
    // All groups at once, each call bounded: with the broker down a sample must not outlast its
    // interval (a clean-clone run saw one take 21.7 s asking the groups one after another). A stage
    // whose lag could not be read is left out of the sample.
    const lagTimeoutMs = Math.max(1_000, Math.floor(o.sampleMs / 4));
    const lags = (
      await Promise.all(
        [...groups].map(async ([label, g]) => {
          const lag = await groupLag(admin, g.group, g.topics, lagTimeoutMs).catch(() => undefined);
          return lag === undefined ? [] : [{ label, lag }];
        }),
      )
    ).flat();
    samples.push({ atMs: now - feedStart, processes: procs, lags });
  };
  let feedStart = Date.now();
  try {
    const input = await env.startPipeline();
    const feedMs = o.minutes * 60_000;
    const planned = soakSchedule(o.seed, env.stageLabels, feedMs, env.cutTarget, o.oneStageKill);
    if (env.noCut !== undefined) o.log(`soak: no network cut: ${env.noCut}`);
    o.log(
      `soak: ${o.minutes} min at ${o.rate} lines/s, ${planned.length} faults, a sample every ${o.sampleMs / 1000} s`,
    );
    feedStart = Date.now();
    const traffic = generateTraffic({
      seed: o.seed,
      hosts: o.hosts,
      rate: o.rate,
      durationSeconds: o.minutes * 60,
      startMs: feedStart,
    });
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const next = Date.now() + o.sampleMs;
        await sample();
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
    })();
    const [linesFed, faults] = await Promise.all([
      feedPaced(
        cluster.bootstrapServers,
        input,
        markedLines(traffic, o.hostileEvery),
        (l) => l.atMs - feedStart,
      ),
      injectAll(planned, feedStart, {
        processes,
        cluster,
        namespace: env.namespace,
        clickhouse: o.clickhouse,
        log: o.log,
      }),
    ]);
    o.log(`soak: fed ${linesFed} lines; waiting until every stage read its inputs to the end`);
    const settled = env.settle(() => {
      sampling = false;
    });
    await sampler;
    const { stagesBehind, agentBehind } = await settled;
    const alerts: AlertLatency[] = [];
    await readTopics({ config, stallMs: 300_000 }, layoutTopics(layout).alerts, (r) => {
      if (r.value === null || r.timestamp === undefined) return;
      const alert = decodeAlert(r.value);
      const newest = Math.max(...alert.result.map((w) => Date.parse(w.request.ts)));
      if (Number.isFinite(newest))
        alerts.push({
          atMs: r.timestamp - feedStart,
          detector: alert.detector_name,
          latencyMs: r.timestamp - newest,
        });
    });
    return {
      seed: o.seed,
      minutes: o.minutes,
      rate: o.rate,
      linesFed,
      sampleMs: o.sampleMs,
      samples,
      faults: faults.map((f) => ({
        ...f,
        injectedAt: f.injectedAt - feedStart,
        restoredAt: f.restoredAt - feedStart,
      })),
      ...(env.noCut === undefined ? {} : { networkCutSkipped: env.noCut }),
      alerts: alerts.sort((a, b) => a.atMs - b.atMs),
      stagesBehind,
      agentBehind,
      unexpectedExits: processes.unexpectedExits,
      durationMs: Date.now() - began,
    };
  } finally {
    await env.close();
  }
}
