import { createHash } from 'node:crypto';
import type { Alert, AlertWarning, LogLine } from '../messages.ts';

/** The median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * Stable alert id: the same detector, event-time window (or, for an alert without one, suspicious
 * batch), host and alerter always give the same id, so every replay yields alerts that sinks
 * recognise; with a window, also a replay at another speed or with other batches. The alerter is
 * part of it because two alerters may send differently adjusted versions of one detection.
 */
export function alertId(
  alert: Pick<Alert, 'detector_name' | 'suspicious_batch_id' | 'src_ip' | 'window_start'>,
  alerter = 'generic',
): string {
  const about =
    alert.window_start === undefined ? alert.suspicious_batch_id : `window\u0000${alert.window_start}`;
  return createHash('sha256')
    .update(`${alert.detector_name}\u0000${about}\u0000${alert.src_ip}\u0000${alerter}`)
    .digest('hex')
    .slice(0, 32);
}

/** The queried name of a line; lines without one are not scored. */
export function domainOf(line: LogLine): string | undefined {
  return typeof line.domain_name === 'string' ? line.domain_name : undefined;
}

/** A scored line: the line and its score (malicious probability or tunnelling score). */
export interface ScoredLine {
  readonly line: LogLine;
  readonly score: number;
  readonly evidence?: Record<string, unknown>;
}

/**
 * Turns scored lines into alerts: a line is a warning when its score reaches `threshold`; each host
 * with at least `minWarnings` (default 1) warnings gets one alert whose `overall_score` is the
 * median of its warnings' scores. Hosts come out in the order of their first line, so a replay
 * emits the same sequence.
 */
export function alertsFor(
  scored: readonly ScoredLine[],
  o: {
    threshold: number;
    minWarnings?: number;
    detectorName: string;
    suspiciousBatchId: string;
    now: number;
  },
): Alert[] {
  const byHost = new Map<string, AlertWarning[]>();
  for (const { line, score, evidence } of scored) {
    if (score < o.threshold) continue;
    const warnings = byHost.get(line.src_ip) ?? [];
    warnings.push({ request: line, probability: score, ...(evidence ? { evidence } : {}) });
    byHost.set(line.src_ip, warnings);
  }
  return [...byHost]
    .filter(([, warnings]) => warnings.length >= (o.minWarnings ?? 1))
    .map(([srcIp, warnings]) => ({
      overall_score: median(warnings.map((w) => w.probability)),
      result: warnings,
      src_ip: srcIp,
      alert_timestamp: new Date(o.now).toISOString(),
      suspicious_batch_id: o.suspiciousBatchId,
      detector_name: o.detectorName,
    }));
}

/** Lines of a batch that are its own, not context carried over from the subnet's previous batch. */
export function ownLines(batch: {
  data: readonly LogLine[];
  context_logline_ids?: readonly string[];
}): LogLine[] {
  const context = new Set(batch.context_logline_ids ?? []);
  return batch.data.filter((line) => !context.has(line.logline_id));
}
