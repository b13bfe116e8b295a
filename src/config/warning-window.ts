/**
 * How a DGA detector counts warnings per host: over an event-time window (see
 * src/stages/detector/warning-window.ts). The window keys are optional in the config type (entries
 * written before they existed stay valid), and their defaults live here, in one place.
 */

/** `warning_window_seconds` when not set: five minutes, far longer than a DGA burst. */
export const DEFAULT_WARNING_WINDOW_SECONDS = 300;
/** `warning_lateness_seconds` when not set: how far out of event-time order a host's lines may come. */
export const DEFAULT_WARNING_LATENESS_SECONDS = 60;
/** The longest window a config may set: one day. */
export const MAX_WARNING_WINDOW_SECONDS = 86_400;

/** The keys of a detector entry this reads. */
export interface WarningWindowKeys {
  readonly min_warnings: number;
  readonly weak_warnings?: { readonly threshold: number; readonly min_warnings: number } | undefined;
  readonly spread_warnings?:
    | {
        readonly threshold: number;
        readonly min_warnings: number;
        readonly exempt_domains: readonly string[];
      }
    | undefined;
  readonly warning_window_seconds?: number | undefined;
  readonly warning_lateness_seconds?: number | undefined;
  readonly warning_idle_timeout_seconds?: number | undefined;
}

/** A detector entry's warning window, in milliseconds, defaults applied. */
export interface WarningWindowSettings {
  /** Distinct warned names a host needs within one window. */
  readonly minWarnings: number;
  /** The second rule (`weak_warnings`): more names at a lower score. */
  readonly weak?: { readonly threshold: number; readonly minWarnings: number } | undefined;
  /** The third rule (`spread_warnings`): names counted per domain they sit under. */
  readonly spread?:
    | { readonly threshold: number; readonly minWarnings: number; readonly exemptDomains: readonly string[] }
    | undefined;
  readonly windowMs: number;
  readonly latenessMs: number;
  /** Wall-clock time without a line after which a host's windows are dropped. */
  readonly idleTimeoutMs: number;
}

/**
 * The shortest idle timeout that never drops a window still open on event time when event time
 * runs at wall-clock speed: a window takes lines until one window past its end plus the lateness.
 */
export function minimumIdleTimeoutSeconds(windowSeconds: number, latenessSeconds: number): number {
  return 2 * windowSeconds + latenessSeconds;
}

export function warningWindowSettings(detector: WarningWindowKeys): WarningWindowSettings {
  const window = detector.warning_window_seconds ?? DEFAULT_WARNING_WINDOW_SECONDS;
  const lateness = detector.warning_lateness_seconds ?? DEFAULT_WARNING_LATENESS_SECONDS;
  const idle = detector.warning_idle_timeout_seconds ?? minimumIdleTimeoutSeconds(window, lateness);
  return {
    minWarnings: detector.min_warnings,
    ...(detector.weak_warnings && {
      weak: { threshold: detector.weak_warnings.threshold, minWarnings: detector.weak_warnings.min_warnings },
    }),
    ...(detector.spread_warnings && {
      spread: {
        threshold: detector.spread_warnings.threshold,
        minWarnings: detector.spread_warnings.min_warnings,
        exemptDomains: detector.spread_warnings.exempt_domains,
      },
    }),
    windowMs: window * 1000,
    latenessMs: lateness * 1000,
    idleTimeoutMs: idle * 1000,
  };
}
