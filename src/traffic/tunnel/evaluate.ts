import { DomainatorReplay } from './domainator-replay.ts';
import type { DnsQuery, TrafficStyle } from './query.ts';
import { BENIGN_STYLES, TUNNEL_STYLES } from './styles.ts';

/** Options of {@link evaluateDomainator}; window settings default to the config's defaults. */
export interface DomainatorEvalOptions {
  readonly seed?: number;
  /** Sessions (host x domain) per style. */
  readonly sessions?: number;
  /** The threshold to report at (the shipped config's). */
  readonly threshold?: number;
  /** A tunnel session counts as detected when a request among its first `maxQueries` reaches the threshold. */
  readonly maxQueries?: number;
  readonly minWindow?: number;
  readonly maxWindow?: number;
  readonly idleTimeoutSeconds?: number;
  readonly tunnelStyles?: readonly TrafficStyle[];
  readonly benignStyles?: readonly TrafficStyle[];
}

/** One tunnelling style at one threshold. */
export interface DetectionRow {
  readonly style: string;
  readonly description: string;
  readonly sessions: number;
  /** Share of sessions with a request reaching the threshold within `maxQueries`. */
  readonly detectionRate: number;
  /** Over detected sessions: the 1-based index of the first request reaching the threshold. */
  readonly medianQueriesToDetection: number | null;
  readonly p90QueriesToDetection: number | null;
  /** Over detected sessions: seconds from the session's first request to the detecting one. */
  readonly medianSecondsToDetection: number | null;
  /** Median over sessions of the highest score within `maxQueries`. */
  readonly medianMaxScore: number;
}

/** One benign style at one threshold. */
export interface FalseAlarmRow {
  readonly style: string;
  readonly description: string;
  readonly sessions: number;
  /** Share of sessions (host x domain) with a request reaching the threshold. */
  readonly falseAlarmRate: number;
  /** The highest score any session of the style reached. */
  readonly maxScore: number;
  /** 95th percentile over sessions of the session's highest score. */
  readonly p95MaxScore: number;
}

export interface ThresholdResult {
  readonly threshold: number;
  readonly detection: readonly DetectionRow[];
  readonly falseAlarms: readonly FalseAlarmRow[];
  /** Mean over tunnel styles of the detection rate. */
  readonly meanDetectionRate: number;
  /** Mean over benign styles of the false-alarm rate. */
  readonly meanFalseAlarmRate: number;
}

export interface DomainatorReport {
  readonly settings: {
    readonly seed: number;
    readonly sessions: number;
    readonly maxQueries: number;
    readonly minWindow: number;
    readonly maxWindow: number;
    readonly idleTimeoutSeconds: number;
  };
  /** At the given (shipped) threshold. */
  readonly shipped: ThresholdResult;
  /**
   * At the threshold that maximises mean detection rate - mean false-alarm rate (Youden's J over
   * styles, each style weighing the same): the middle of the best interval.
   */
  readonly best: ThresholdResult;
}

/** The scores the Domainator gives each request of a session, in order (0 before a window is full). */
interface ScoredSession {
  readonly scores: number[];
  readonly atMs: number[];
}

/**
 * Feeds a session's queries through the Domainator exactly as the stage applies them: `observe` on
 * a window store, and the expiry timer (`expireIdle` every `expiryIntervalMs`) on the queries'
 * event time, which stands in for the stage's wall clock.
 */
export function scoreSession(
  queries: readonly DnsQuery[],
  o: { minWindow: number; maxWindow: number; idleTimeoutSeconds: number },
): ScoredSession {
  const replay = new DomainatorReplay(o);
  const scores: number[] = [];
  const atMs: number[] = [];
  for (const q of queries) {
    scores.push(replay.add(q.host, q.name, q.atMs) ?? 0);
    atMs.push(q.atMs);
  }
  return { scores, atMs };
}

const START_MS = Date.UTC(2026, 0, 5, 9);

function sessionsOf(style: TrafficStyle, seed: number, count: number, queries: number): DnsQuery[][] {
  return Array.from({ length: count }, (_, i) =>
    style.session({
      seed: `${seed}:${i}`,
      host: `10.${Math.floor(i / 250)}.${i % 250}.${10 + (seed % 200)}`,
      startMs: START_MS + i * 1000,
      queries,
    }),
  );
}

/**
 * Measures the Domainator on each tunnelling style (detection rate within `maxQueries`, queries
 * and seconds to detection) and each benign style (share of host x domain sessions that reach the
 * threshold), at the given threshold and at the best one. Pure and deterministic: the same options
 * give the same report.
 */
export function evaluateDomainator(options: DomainatorEvalOptions = {}): DomainatorReport {
  const settings = {
    seed: options.seed ?? 1,
    sessions: options.sessions ?? 60,
    maxQueries: options.maxQueries ?? 100,
    minWindow: options.minWindow ?? 3,
    maxWindow: options.maxWindow ?? 10,
    idleTimeoutSeconds: options.idleTimeoutSeconds ?? 300,
  };
  const tunnels = (options.tunnelStyles ?? TUNNEL_STYLES).map((style) => ({
    style,
    sessions: sessionsOf(style, settings.seed, settings.sessions, settings.maxQueries).map((s) =>
      scoreSession(s, settings),
    ),
  }));
  const benign = (options.benignStyles ?? BENIGN_STYLES).map((style) => ({
    style,
    sessions: sessionsOf(style, settings.seed, settings.sessions, style.typicalQueries).map((s) =>
      scoreSession(s, settings),
    ),
  }));
  const at = (threshold: number): ThresholdResult => {
    const detection = tunnels.map(({ style, sessions }) => detectionRow(style, sessions, threshold));
    const falseAlarms = benign.map(({ style, sessions }) => falseAlarmRow(style, sessions, threshold));
    return {
      threshold,
      detection,
      falseAlarms,
      meanDetectionRate: mean(detection.map((d) => d.detectionRate)),
      meanFalseAlarmRate: mean(falseAlarms.map((f) => f.falseAlarmRate)),
    };
  };
  const best = bestThreshold(
    tunnels.map((t) => t.sessions.map(maxScore)),
    benign.map((b) => b.sessions.map(maxScore)),
  );
  return { settings, shipped: at(options.threshold ?? 0.7), best: at(best) };
}

function detectionRow(
  style: TrafficStyle,
  sessions: readonly ScoredSession[],
  threshold: number,
): DetectionRow {
  const hits = sessions.flatMap((s) => {
    const index = s.scores.findIndex((score) => score >= threshold);
    return index < 0
      ? []
      : [{ queries: index + 1, seconds: ((s.atMs[index] ?? 0) - (s.atMs[0] ?? 0)) / 1000 }];
  });
  return {
    style: style.name,
    description: style.description,
    sessions: sessions.length,
    detectionRate: hits.length / sessions.length,
    medianQueriesToDetection: quantile(
      hits.map((h) => h.queries),
      0.5,
    ),
    p90QueriesToDetection: quantile(
      hits.map((h) => h.queries),
      0.9,
    ),
    medianSecondsToDetection: quantile(
      hits.map((h) => h.seconds),
      0.5,
    ),
    medianMaxScore: quantile(sessions.map(maxScore), 0.5) ?? 0,
  };
}

function falseAlarmRow(
  style: TrafficStyle,
  sessions: readonly ScoredSession[],
  threshold: number,
): FalseAlarmRow {
  const maxima = sessions.map(maxScore);
  return {
    style: style.name,
    description: style.description,
    sessions: sessions.length,
    falseAlarmRate: maxima.filter((m) => m >= threshold).length / sessions.length,
    maxScore: Math.max(0, ...maxima),
    p95MaxScore: quantile(maxima, 0.95) ?? 0,
  };
}

/**
 * The threshold with the highest mean detection rate minus mean false-alarm rate. Candidates lie
 * between consecutive distinct session maxima; of the best ones, the middle (the widest margin).
 */
export function bestThreshold(tunnel: readonly number[][], benign: readonly number[][]): number {
  const values = [...new Set([...tunnel.flat(), ...benign.flat(), 0, 1])].sort((a, b) => a - b);
  const candidates = values.slice(1).map((v, i) => ((values[i] ?? 0) + v) / 2);
  const rate = (maxima: readonly number[], t: number) => maxima.filter((m) => m >= t).length / maxima.length;
  const score = (t: number) => mean(tunnel.map((m) => rate(m, t))) - mean(benign.map((m) => rate(m, t)));
  const scored = candidates.map((t) => ({ t, j: score(t) }));
  const top = Math.max(...scored.map((s) => s.j));
  const best = scored.filter((s) => s.j >= top - 1e-12).map((s) => s.t);
  return round(best[Math.floor((best.length - 1) / 2)] ?? 0.5, 3);
}

const maxScore = (s: ScoredSession) => Math.max(0, ...s.scores);
const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

function quantile(xs: readonly number[], q: number): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
}
