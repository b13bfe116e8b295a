import { createHash } from 'node:crypto';
import type { Alert, Logline, Warning } from './messages.ts';

/** The median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Stable alert id: the same detector, suspicious batch and host always give the same id. */
export function alertId(detectorName: string, suspiciousBatchId: string, srcIp: string): string {
  return createHash('sha256')
    .update(`${detectorName}\u0000${suspiciousBatchId}\u0000${srcIp}`)
    .digest('hex')
    .slice(0, 32);
}

/** A scored line: the line and its score (malicious probability or tunnelling score). */
export interface ScoredLine {
  readonly line: Logline;
  readonly score: number;
  readonly evidence?: Record<string, unknown>;
}

/**
 * Turns scored lines into alerts: a line is a warning when its score reaches `threshold`; each host
 * with at least `minWarnings` (default 1) warnings gets one alert whose `overall_score` is the median of its warnings'
 * scores. Hosts come out in the order of their first line, so a replay emits the same sequence.
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
  const byHost = new Map<string, Warning[]>();
  for (const { line, score, evidence } of scored) {
    if (score < o.threshold) continue;
    const warnings = byHost.get(line.src_ip) ?? [];
    warnings.push({
      ...(line.logline_id !== undefined ? { logline_id: line.logline_id } : {}),
      ts: line.ts,
      domain_name: line.domain_name,
      probability: score,
      ...(evidence ? { evidence } : {}),
    });
    byHost.set(line.src_ip, warnings);
  }
  return [...byHost]
    .filter(([, warnings]) => warnings.length >= (o.minWarnings ?? 1))
    .map(([srcIp, warnings]) => ({
      alert_id: alertId(o.detectorName, o.suspiciousBatchId, srcIp),
      overall_score: median(warnings.map((w) => w.probability)),
      result: warnings,
      src_ip: srcIp,
      alert_timestamp: new Date(o.now).toISOString(),
      suspicious_batch_id: o.suspiciousBatchId,
      detector_name: o.detectorName,
    }));
}
