import type { InjectedFault } from './faults.ts';
import type { AlertLatency } from './soak.ts';
import type { Sample } from './soak-sampler.ts';

/** A process's memory over the soak. */
export interface MemoryFigure {
  readonly label: string;
  readonly peakMiB: number;
  readonly lastMiB: number;
  /**
   * Least-squares slope of its RSS after the warm-up (the first tenth of the soak), MiB per hour.
   * Restarts (kill -9) reset a process's memory; the slope is over every sample all the same, as an
   * operator's graph would show it.
   */
  readonly slopeMiBPerHour: number;
}

/** What one fault did to the pipeline's backlog and to its alerts. */
export interface FaultFigure {
  readonly kind: string;
  readonly target: string;
  /** Since the soak began (s). */
  readonly atSeconds: number;
  /** Largest total lag (records behind, every stage) from the fault until the next one. */
  readonly peakLag: number;
  /**
   * Seconds from the fault's end until the total lag was back at its level before the fault (at
   * most twice the median of the three samples before it, and at least 100 records), by the first
   * sample after the end; undefined when it never was. Faults a few seconds apart share their
   * recovery: a later one may hold back an earlier one's.
   */
  readonly recoveredAfterSeconds: number | undefined;
  /** Alerts raised from the fault until the next one, and their p99 latency (ms). */
  readonly alerts: number;
  readonly alertP99Ms: number | undefined;
}

export interface SoakFigures {
  readonly memory: readonly MemoryFigure[];
  readonly faults: readonly FaultFigure[];
  readonly alertP99Ms: number | undefined;
  readonly alertMedianMs: number | undefined;
  /** Mean CPU of every process together, in % of one core. */
  readonly meanCpuPercent: number;
}

export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? sorted[0];
}

/** Slope of y over x by least squares (0 for fewer than two distinct x). */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  if (sxx === 0) return 0;
  return points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
}

const totalLag = (s: Sample): number => s.lags.reduce((sum, l) => sum + l.lag, 0);

export function soakFigures(
  samples: readonly Sample[],
  faults: readonly InjectedFault[],
  alerts: readonly AlertLatency[],
): SoakFigures {
  const end = samples.at(-1)?.atMs ?? 0;
  const labels = [...new Set(samples.flatMap((s) => s.processes.map((p) => p.label)))];
  const memory = labels.map((label): MemoryFigure => {
    const points = samples.flatMap((s) =>
      s.processes.filter((p) => p.label === label).map((p) => ({ x: s.atMs, y: p.rssMiB })),
    );
    const settled = points.filter((p) => p.x >= end / 10);
    return {
      label,
      peakMiB: Math.max(0, ...points.map((p) => p.y)),
      lastMiB: points.at(-1)?.y ?? 0,
      slopeMiBPerHour: slope(settled) * 3_600_000,
    };
  });
  const figures = faults.map((f, i): FaultFigure => {
    const until = faults[i + 1]?.injectedAt ?? Number.POSITIVE_INFINITY;
    const before = samples
      .filter((s) => s.atMs < f.injectedAt)
      .slice(-3)
      .map(totalLag);
    const level = Math.max(100, 2 * (quantile(before, 0.5) ?? 0));
    const during = samples.filter((s) => s.atMs >= f.injectedAt && s.atMs < until);
    const back = samples.find((s) => s.atMs >= f.restoredAt && totalLag(s) <= level);
    const raised = alerts.filter((a) => a.atMs >= f.injectedAt && a.atMs < until).map((a) => a.latencyMs);
    return {
      kind: f.kind,
      target: f.target,
      atSeconds: f.injectedAt / 1000,
      peakLag: Math.max(0, ...during.map(totalLag)),
      recoveredAfterSeconds: back === undefined ? undefined : Math.max(0, back.atMs - f.restoredAt) / 1000,
      alerts: raised.length,
      alertP99Ms: quantile(raised, 0.99),
    };
  });
  const cpu = samples.map((s) => s.processes.reduce((sum, p) => sum + p.cpuPercent, 0));
  const latencies = alerts.map((a) => a.latencyMs);
  return {
    memory,
    faults: figures,
    alertP99Ms: quantile(latencies, 0.99),
    alertMedianMs: quantile(latencies, 0.5),
    meanCpuPercent: cpu.length === 0 ? 0 : cpu.reduce((a, b) => a + b, 0) / cpu.length,
  };
}
