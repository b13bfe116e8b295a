/**
 * CPU time and memory of processes from /proc (Linux): sampled on a timer so a measurement window
 * chosen afterwards (from the observer's samples) can be cut out of them.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
export const CLOCK_TICKS_PER_SEC = 100;

/** utime + stime of a process in ticks, or undefined once it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Peak resident set size (VmHWM) in bytes, or undefined once the process is gone. */
export function peakRssBytes(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the CPU ticks of some processes every `intervalMs`, stamped with Date.now(). */
export class CpuSampler {
  readonly #samples = new Map<number, [number, number][]>();
  readonly #timer: NodeJS.Timeout;

  constructor(pids: readonly number[], intervalMs = 20) {
    for (const pid of pids) this.#samples.set(pid, []);
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  #sample(): void {
    const now = Date.now();
    for (const [pid, xs] of this.#samples) {
      const ticks = cpuTicks(pid);
      if (ticks !== undefined) xs.push([now, ticks]);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** CPU seconds `pid` used between two epoch-ms instants (linear between samples). */
  cpuSeconds(pid: number, from: number, to: number): number {
    const xs = this.#samples.get(pid) ?? [];
    return (ticksAt(xs, to) - ticksAt(xs, from)) / CLOCK_TICKS_PER_SEC;
  }
}

function ticksAt(xs: readonly [number, number][], t: number): number {
  if (xs.length === 0) return NaN;
  if (t <= xs[0]![0]) return xs[0]![1];
  for (let i = 1; i < xs.length; i += 1) {
    const [t1, v1] = xs[i]!;
    if (t1 < t) continue;
    const [t0, v0] = xs[i - 1]!;
    return t1 === t0 ? v1 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
  }
  return xs[xs.length - 1]![1];
}
