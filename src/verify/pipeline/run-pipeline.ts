import { rmSync } from 'node:fs';
import { injectAll } from './fault-injection.ts';
import { feedLines, verifyTraffic, type TrafficShape } from './feed.ts';
import { faultSchedule, type InjectedFault } from './faults.ts';
import { accountLines, type LineAccounting } from './line-fates.ts';
import { PipelineEnvironment, type PipelineEnvironmentOptions } from './pipeline-environment.ts';
import { readPipeline } from './read-pipeline.ts';

export interface PipelineRunOptions extends PipelineEnvironmentOptions {
  readonly traffic: TrafficShape;
  /** Wall time the feed spreads the lines over (the faults happen within it). */
  readonly feedMs: number;
  readonly log: (line: string) => void;
}

export interface PipelineRunReport {
  readonly seed: number;
  readonly faulted: boolean;
  readonly lines: number;
  /** Of them, the hostile lines the collector must reject. */
  readonly invalidLines: number;
  readonly infectedHosts: readonly string[];
  readonly faults: readonly InjectedFault[];
  /** Why the run cut no stage's network (no root, no `ip netns`), when it did not. */
  readonly networkCutSkipped?: string;
  /** Stage groups not at the end of their inputs at the settle deadline, and by how much (empty: none). */
  readonly stagesBehind: readonly string[];
  /** Partitions whose rows the agent had not all copied at the deadline (empty: it had). */
  readonly agentBehind: readonly string[];
  readonly unexpectedExits: readonly { label: string; code: number | null; signal: string | null }[];
  readonly accounting: LineAccounting;
  readonly durationMs: number;
}

/** One run: a fresh broker, the pipeline as processes, the seed's traffic, its faults, the accounting. */
export async function runPipeline(o: PipelineRunOptions): Promise<PipelineRunReport> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const env = await PipelineEnvironment.start(o);
  const { cluster, config, processes } = env;
  try {
    const traffic = verifyTraffic(o.traffic);
    const input = await env.startPipeline();
    o.log(
      `seed ${o.seed}${o.faults ? '' : ' (no faults)'}: feeding ${traffic.lines.length} lines over ${o.feedMs / 1000} s`,
    );
    const planned = o.faults ? faultSchedule(o.seed, env.stageLabels, o.feedMs, env.cutTarget) : [];
    if (o.faults && env.noCut !== undefined) o.log(`seed ${o.seed}: no network cut: ${env.noCut}`);
    const feedStart = Date.now();
    const [, faults] = await Promise.all([
      feedLines(cluster.bootstrapServers, input, traffic.lines, o.feedMs),
      injectAll(planned, feedStart, {
        processes,
        cluster,
        namespace: env.namespace,
        clickhouse: o.clickhouse,
        log: o.log,
      }),
    ]);
    o.log(`seed ${o.seed}: fed; waiting until every stage read its inputs to the end`);
    const { stagesBehind, agentBehind } = await env.settle();
    const read = await readPipeline({ config, database: o.database });
    const accounting = accountLines(
      traffic.lines.map((l) => ({ id: l.id, valid: l.valid })),
      read,
    );
    return {
      seed: o.seed,
      faulted: o.faults,
      lines: traffic.lines.length,
      invalidLines: traffic.lines.filter((l) => !l.valid).length,
      infectedHosts: traffic.truth
        .filter((h) => h.role !== 'benign')
        .map((h) => h.ip)
        .sort(),
      faults,
      ...(o.faults && env.noCut !== undefined ? { networkCutSkipped: env.noCut } : {}),
      stagesBehind,
      agentBehind,
      unexpectedExits: processes.unexpectedExits,
      accounting,
      durationMs: Date.now() - began,
    };
  } finally {
    await env.close();
  }
}
