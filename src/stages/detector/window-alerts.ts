import type { KeyValueStore } from '../../runtime/index.ts';
import { timestampMicros, type Alert, type LogLine } from '../messages.ts';
import { domainOf, median, type ScoredLine } from './alerts.ts';
import {
  advanceWindows,
  expireIdle,
  type HostWindows,
  type WindowAlert,
  type WindowSettings,
} from './warning-window.ts';

/** The DGA detector's per-host warning windows, keyed by src_ip (its input is keyed by src_ip). */
export const WARNING_WINDOWS_STORE = 'dga_warning_windows';

/** A host's windows as the store keeps them: each warning carries its line for the alert. */
export type StoredHostWindows = HostWindows<LogLine>;

/**
 * Adds one suspicious batch's scored lines to the hosts' windows in `store` and returns the alerts
 * the batch raises, in the Alert shape (`suspicious_batch_id` is the batch that completed the
 * window; the window names the alert).
 */
export function windowAlerts(
  store: KeyValueStore<StoredHostWindows>,
  scored: readonly ScoredLine[],
  o: {
    /** The entry's rules (`windowRules`). */
    settings: WindowSettings;
    detectorName: string;
    suspiciousBatchId: string;
    now: number;
  },
): Alert[] {
  const step = advanceWindows(
    (host) => store.get(host),
    scored.map(({ line, score }) => ({
      host: line.src_ip,
      id: line.logline_id,
      name: domainOf(line),
      atMs: timestampMicros(line.ts) / 1000,
      score,
      payload: line,
    })),
    o.settings,
    o.now,
  );
  for (const [host, next] of step.hosts) {
    if (next) store.put(host, next);
    else if (store.has(host)) store.delete(host);
  }
  return step.alerts.map((a) => toAlert(a, o));
}

function toAlert(
  a: WindowAlert<LogLine>,
  o: { detectorName: string; suspiciousBatchId: string; now: number },
): Alert {
  return {
    overall_score: median(a.warnings.map((w) => w.score)),
    result: a.warnings.map((w) => ({ request: w.payload, probability: w.score })),
    src_ip: a.host,
    alert_timestamp: new Date(o.now).toISOString(),
    suspicious_batch_id: o.suspiciousBatchId,
    detector_name: o.detectorName,
    window_start: new Date(a.startMs).toISOString(),
    window_end: new Date(a.endMs).toISOString(),
    // Fired by the spread rule alone: its names are alike in where they sit, not in how they look.
    ...(a.group !== undefined && { kind: `failed names under ${a.group}` }),
  };
}

/** Drops the windows of hosts without a line for the idle timeout (wall clock). */
export function dropIdleHosts(
  store: KeyValueStore<StoredHostWindows>,
  now: number,
  idleTimeoutMs: number,
): void {
  const idle = [...store.range()].filter(([, w]) => expireIdle(w, now, idleTimeoutMs)).map(([k]) => k);
  for (const key of idle) store.delete(key);
}
