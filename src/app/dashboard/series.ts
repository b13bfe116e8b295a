import { num, str, type Row } from './clickhouse-reader.ts';

/** Columns for uPlot: `t` in epoch seconds, one array per named series, aligned on `t`. */
export interface AlignedSeries {
  t: number[];
  series: { name: string; values: (number | null)[] }[];
}

/** Every bucket start from `since` to `now`, so charts keep a steady x axis through quiet periods. */
export function bucketGrid(since: number, now: number, bucketMs: number): number[] {
  const out: number[] = [];
  for (let t = Math.floor(since / bucketMs) * bucketMs; t <= now; t += bucketMs) out.push(t);
  return out;
}

/**
 * Aligns rows `{<nameKey>, t, <valueKey>}` on the grid. `fill` is what an empty bucket holds:
 * 0 for counts, null (a gap) for latencies and levels.
 */
export function align(
  rows: readonly Row[],
  grid: readonly number[],
  name: (row: Row) => string,
  valueKey: string,
  fill: 0 | null,
  order: (a: string, b: string) => number = (a, b) => a.localeCompare(b),
): AlignedSeries {
  const index = new Map(grid.map((t, i) => [t, i]));
  const byName = new Map<string, (number | null)[]>();
  for (const row of rows) {
    const i = index.get(num(row.t));
    if (i === undefined) continue;
    const key = name(row);
    let values = byName.get(key);
    if (!values) {
      values = grid.map(() => fill);
      byName.set(key, values);
    }
    values[i] = num(row[valueKey]);
  }
  return {
    t: grid.map((t) => t / 1000),
    series: [...byName.keys()].sort(order).map((n) => ({ name: n, values: byName.get(n)! })),
  };
}

export const column =
  (key: string) =>
  (row: Row): string =>
    str(row[key]);
