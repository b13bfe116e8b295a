import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

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
