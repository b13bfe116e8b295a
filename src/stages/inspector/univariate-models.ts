/**
 * Streaming univariate models. Each scores a value against what it has seen of its subnet (the
 * state, JSON-safe so it lives in a state store), then learns the value. Scores are in [0, 1]: a
 * deviation of `sigma` spreads or more scores 1; a value unlike a constant history scores 1.
 */

/** A streaming model over rows of `dims` numbers; `state` is changed in place. */
export interface StreamModel<S = unknown> {
  readonly dims: number;
  initial(): S;
  scoreAndLearn(state: S, row: readonly number[]): number;
}

function deviationScore(distance: number, spread: number, sigma: number): number {
  if (spread === 0) return distance === 0 ? 0 : 1;
  return Math.min(1, distance / spread / sigma);
}

interface WindowState {
  window: number[];
}

interface RunningState {
  n: number;
  mean: number;
  m2: number;
}

/** ZScoreDetector: |x - mean| / std (population) of the previous `window_len` values, or all of them. */
export function zScoreModel(args: {
  window_len: number;
  is_global: boolean;
  sigma: number;
}): StreamModel<WindowState | RunningState> {
  if (args.is_global) {
    return {
      dims: 1,
      initial: () => ({ n: 0, mean: 0, m2: 0 }),
      scoreAndLearn(state, [x = 0]) {
        const s = state as RunningState;
        const score = s.n === 0 ? 0 : deviationScore(Math.abs(x - s.mean), Math.sqrt(s.m2 / s.n), args.sigma);
        // Welford's update: numerically stable over an unbounded stream.
        s.n += 1;
        const delta = x - s.mean;
        s.mean += delta / s.n;
        s.m2 += delta * (x - s.mean);
        return score;
      },
    };
  }
  return {
    dims: 1,
    initial: () => ({ window: [] }),
    scoreAndLearn(state, [x = 0]) {
      const { window } = state as WindowState;
      let score = 0;
      if (window.length > 0) {
        const mean = window.reduce((sum, v) => sum + v, 0) / window.length;
        const variance = window.reduce((sum, v) => sum + (v - mean) ** 2, 0) / window.length;
        score = deviationScore(Math.abs(x - mean), Math.sqrt(variance), args.sigma);
      }
      push(window, x, args.window_len);
      return score;
    },
  };
}

/** MadDetector: |x - median| / (1.4826 * MAD) of the previous `window_len` values. */
export function madModel(args: { window_len: number; sigma: number }): StreamModel<WindowState> {
  return {
    dims: 1,
    initial: () => ({ window: [] }),
    scoreAndLearn(state, [x = 0]) {
      const { window } = state;
      let score = 0;
      if (window.length > 0) {
        const center = median(window);
        const mad = median(window.map((v) => Math.abs(v - center)));
        // 1.4826 makes the MAD estimate the standard deviation of normally distributed data.
        score = deviationScore(Math.abs(x - center), 1.4826 * mad, args.sigma);
      }
      push(window, x, args.window_len);
      return score;
    },
  };
}

interface EwmaState {
  n: number;
  mean: number;
  variance: number;
}

/**
 * EWMADetector: the residual of x against an exponentially weighted mean, over the exponentially
 * weighted standard deviation (both with weight `alpha` for the newest value).
 */
export function ewmaModel(args: { alpha: number; sigma: number }): StreamModel<EwmaState> {
  return {
    dims: 1,
    initial: () => ({ n: 0, mean: 0, variance: 0 }),
    scoreAndLearn(state, [x = 0]) {
      if (state.n === 0) {
        state.n = 1;
        state.mean = x;
        return 0;
      }
      const diff = x - state.mean;
      const score = deviationScore(Math.abs(diff), Math.sqrt(state.variance), args.sigma);
      state.mean += args.alpha * diff;
      state.variance = (1 - args.alpha) * (state.variance + args.alpha * diff * diff);
      state.n += 1;
      return score;
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function push(window: number[], value: number, size: number): void {
  window.push(value);
  if (window.length > size) window.splice(0, window.length - size);
}
