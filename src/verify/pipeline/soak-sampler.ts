import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import type { HamstringConfig } from '../../config/index.ts';
import { fullStageName } from '../../config/index.ts';
import type { AdminPort } from '../../kafka/admin.ts';
import { componentGroupId, componentsOf, pipelineComponents } from '../../stages/index.ts';
import type { PipelineLayout } from './layout.ts';

/** One process at one sampling time: resident memory and CPU since the sample before. */
export interface ProcessSample {
  readonly label: string;
  readonly rssMiB: number;
  /** CPU time over the interval as a share of one core, in % (200 on both cores of this machine). */
  readonly cpuPercent: number;
}

/** A stage's consumer group at one sampling time: records of its inputs not yet committed. */
export interface LagSample {
  readonly label: string;
  readonly lag: number;
}

export interface Sample {
  /** Since the soak began (ms). */
  readonly atMs: number;
  readonly processes: readonly ProcessSample[];
  readonly lags: readonly LagSample[];
}

/** The consumer group and input topics of every stage process, by its label (`collector dga_collector`). */
export function stageGroups(
  config: HamstringConfig,
  layout: PipelineLayout,
): Map<string, { group: string; topics: string[] }> {
  const paths = layout.collectors.flatMap((c) => c.paths);
  const inputs = (kind: string, name: string): string[] => {
    switch (kind) {
      case 'logserver':
        return [...layout.logserverInputs];
      case 'collector':
        return layout.collectors.filter((c) => c.name === name).map((c) => c.input);
      case 'prefilter':
        return paths.filter((p) => p.prefilter === name).map((p) => p.prefilterInput);
      case 'inspector':
        return paths.filter((p) => p.inspector === name).map((p) => p.inspectorInput);
      case 'detector':
        return paths.filter((p) => p.detector === name).map((p) => p.detectorInput);
      default:
        return paths.flatMap((p) => p.alerterInputs.filter((a) => a.alerter === name).map((a) => a.topic));
    }
  };
  const groups = new Map<string, { group: string; topics: string[] }>();
  for (const c of pipelineComponents(config)) {
    const full = fullStageName(c.kind);
    if (full === undefined) continue;
    // As componentStage names the worker: the kind's full name, with the component's when shared.
    const group = componentsOf(config, c.kind).length <= 1 ? full : componentGroupId(full, c.name);
    groups.set(c.name === c.kind ? c.kind : `${c.kind} ${c.name}`, {
      group,
      topics: [...new Set(inputs(c.kind, c.name))],
    });
  }
  return groups;
}

/**
 * Records behind a group on `topics`: per partition, the high watermark less the committed offset
 * less one, the commit marker that ends every transaction of the writer (a stage commits the offset
 * after the last record it read, never past the marker). Exact for committed transactions; one short
 * for a transaction still open.
 */
export async function groupLag(
  admin: AdminPort,
  group: string,
  topics: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const committed = new Map(
    (await admin.groupOffsets(group, [...topics], timeoutMs)).map((o) => [
      `${o.topic}:${o.partition}`,
      o.offset,
    ]),
  );
  let lag = 0;
  for (const topic of topics)
    for (const w of await admin.watermarks(topic, timeoutMs)) {
      const at = committed.get(`${topic}:${w.partition}`) ?? -1;
      lag += Math.max(0, w.high - Math.max(at, w.low) - 1);
    }
  return lag;
}

/** CPU ticks per second for /proc's times. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Resident set size (MiB) and user + system CPU time (s) of a process, from /proc. */
export function processUsage(pid: number): { rssMiB: number; cpuSeconds: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssMiB: rssKb / 1024, cpuSeconds: ticks / TICKS };
  } catch {
    return undefined;
  }
}
