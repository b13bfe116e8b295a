import type { InspectorConfig } from '../../config/index.ts';

/** Microseconds of one numpy time unit (`time_type`). */
const UNIT_MICROS: Readonly<Record<InspectorConfig['time_type'], number>> = {
  ns: 0.001,
  us: 1,
  ms: 1000,
  s: 1_000_000,
  m: 60_000_000,
  h: 3_600_000_000,
  D: 86_400_000_000,
};

/** Width of one bin in microseconds: `time_range` units of `time_type`. */
export function binWidthMicros(timeType: InspectorConfig['time_type'], timeRange: number): number {
  return UNIT_MICROS[timeType] * timeRange;
}

/** A batch's time series: one row per bin, bins aligned to multiples of the width since the epoch. */
export interface BinnedSeries {
  /** Start of the first bin (microseconds since the epoch). */
  readonly start: number;
  /** Width of each bin; wider than asked when the span needed more than `maxBins` bins. */
  readonly width: number;
  /** Requests per bin, summed (the Python code overwrote a bin's count with the last one). */
  readonly counts: readonly number[];
  /** Mean response size of the bin's requests; 0 for an empty bin. */
  readonly meanSizes: readonly number[];
}

/**
 * Bins request times (microseconds) from the bin of `from` (or of the earliest time) to the bin of
 * the latest time, empty bins included, so the models see quiet periods as zeros; a gap since `from`
 * longer than `maxBins` bins is shortened to fit. Times before `from` are left out (their bins were
 * scored with an earlier batch). When the times themselves span more than `maxBins` bins, the width
 * is multiplied by the smallest integer that fits them, so any batch costs a bounded amount of work.
 */
export function binRequests(
  times: readonly number[],
  sizes: readonly number[],
  width: number,
  maxBins: number,
  from?: number,
): BinnedSeries | undefined {
  const kept = times.flatMap((time, index) => (from === undefined || time >= from ? [index] : []));
  if (kept.length === 0) return undefined;
  let earliest = Infinity;
  let latest = -Infinity;
  for (const index of kept) {
    earliest = Math.min(earliest, times[index]!);
    latest = Math.max(latest, times[index]!);
  }
  let step = width;
  let first = Math.floor(earliest / step);
  const last = Math.floor(latest / step);
  // A quiet gap since `from` becomes empty bins, at most as many as keep the series within maxBins.
  if (from !== undefined) first = Math.min(first, Math.max(Math.floor(from / step), last - maxBins + 1));
  let bins = last - first + 1;
  if (bins > maxBins) {
    step = width * Math.ceil(bins / maxBins);
    first = Math.floor(earliest / step);
    bins = Math.floor(latest / step) - first + 1;
  }
  const counts = new Array<number>(bins).fill(0);
  const totals = new Array<number>(bins).fill(0);
  for (const index of kept) {
    const bin = Math.floor(times[index]! / step) - first;
    counts[bin]! += 1;
    totals[bin]! += sizes[index] ?? 0;
  }
  return {
    start: first * step,
    width: step,
    counts,
    meanSizes: counts.map((count, bin) => (count === 0 ? 0 : totals[bin]! / count)),
  };
}

/** A response size such as `331` or `331b` as a number; 0 when it has no leading number. */
export function responseSize(value: unknown): number {
  const size = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : NaN;
  return Number.isFinite(size) ? size : 0;
}
