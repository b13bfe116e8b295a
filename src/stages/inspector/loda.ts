import type { StreamModel } from './univariate-models.ts';

interface LodaState {
  window: number[][];
}

/**
 * LodaDetector (Pevný 2016, "Loda: Lightweight on-line detector of anomalies"): `projections` random
 * Gaussian directions drawn from `seed`, and per direction a histogram of `bins` equal-width bins over
 * the projections of the last `window_len` rows (each feature standardised by the window's mean and
 * std, so a count and a size in bytes weigh alike). Loda's score is the mean negative log density;
 * here, to stay in [0, 1] like every model, each direction contributes 1 - (rows in the row's bin /
 * rows in the fullest bin): 0 in the densest region, 1 outside the seen range or in an empty bin.
 */
export function lodaModel(
  args: { window_len: number; projections: number; bins: number; seed: number },
  dims: number,
): StreamModel<LodaState> {
  const directions = gaussianDirections(args.projections, dims, args.seed);
  return {
    dims,
    initial: () => ({ window: [] }),
    scoreAndLearn(state, row) {
      const { window } = state;
      let score = 0;
      if (window.length >= 2) {
        const scale = standardiser(window, dims);
        const rows = window.map(scale);
        const x = scale(row);
        let total = 0;
        for (const direction of directions) {
          total += rarity(
            rows.map((r) => dot(direction, r)),
            dot(direction, x),
            args.bins,
          );
        }
        score = total / directions.length;
      }
      window.push([...row]);
      if (window.length > args.window_len) window.splice(0, window.length - args.window_len);
      return score;
    },
  };
}

/** 1 - (count of x's histogram bin / count of the fullest bin); 1 when x is outside the range. */
export function rarity(values: readonly number[], x: number, bins: number): number {
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    min = Math.min(min, value);
    max = Math.max(max, value);
  }
  if (x < min || x > max) return 1;
  if (max === min) return 0;
  const width = (max - min) / bins;
  const binOf = (value: number) => Math.min(bins - 1, Math.floor((value - min) / width));
  const counts = new Array<number>(bins).fill(0);
  for (const value of values) counts[binOf(value)]! += 1;
  return 1 - counts[binOf(x)]! / Math.max(...counts);
}

function standardiser(window: readonly number[][], dims: number): (row: readonly number[]) => number[] {
  const means: number[] = [];
  const stds: number[] = [];
  for (let d = 0; d < dims; d += 1) {
    const mean = window.reduce((sum, row) => sum + (row[d] ?? 0), 0) / window.length;
    const variance = window.reduce((sum, row) => sum + ((row[d] ?? 0) - mean) ** 2, 0) / window.length;
    means.push(mean);
    stds.push(variance > 0 ? Math.sqrt(variance) : 1);
  }
  return (row) => means.map((mean, d) => ((row[d] ?? 0) - mean) / stds[d]!);
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += a[i]! * (b[i] ?? 0);
  return sum;
}

/** `count` directions of `dims` standard-normal components from a seeded generator (mulberry32). */
export function gaussianDirections(count: number, dims: number, seed: number): number[][] {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // Box-Muller; 1 - u keeps the logarithm's argument above zero.
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return Array.from({ length: count }, () => Array.from({ length: dims }, normal));
}
