/**
 * Host-level evaluation: generated traffic whose infected hosts run DGA families, through what the
 * pipeline does after the collector: the prefilter (NXDOMAIN answers only), the detector's score,
 * and warnings per host over an event-time window (`min_warnings` distinct names, or the weak rule's
 * more names at a lower score). Benign hosts also send browsers' random intranet-redirect probes.
 */
import {
  advanceWindows,
  type HostWindows,
  type WarningRule,
  type WindowLine,
} from '../../src/stages/detector/warning-window.ts';
import { generateTraffic } from '../../src/traffic/generator.ts';
import { DomainatorReplay, type ReplaySettings } from '../../src/traffic/tunnel/domainator-replay.ts';

export interface HostLevelOptions {
  readonly seed: number;
  readonly families: readonly string[];
  readonly benignHosts: number;
  readonly hours: number;
  /** Lookups per host and second (benign hosts). */
  readonly perHostRate: number;
  readonly benignNames: readonly string[];
  readonly score: (names: readonly string[]) => number[];
  readonly threshold: number;
  readonly minWarnings: number;
  readonly windowSeconds: number;
  /** The detector's second rule (`weak_warnings`), if any. */
  readonly weak?: WarningRule | undefined;
  /** The detector's third rule (`spread_warnings`, with its `groupOf`), if any. */
  readonly spread?: WarningRule | undefined;
  /** Chromium's intranet-redirect probe sets per benign host and hour (see `generateTraffic`). */
  readonly browserProbes: number;
  /** Share of benign lookups answered NXDOMAIN (`generateTraffic`'s default when undefined). */
  readonly nxdomainShare?: number | undefined;
  /**
   * The shipped config's Domainator, run beside on every line (its chain has no NXDOMAIN filter)
   * with event time as its clock: a host is alerted by it when one request reaches `threshold`.
   */
  readonly domainator?: DomainatorSettings | undefined;
}

export interface DomainatorSettings extends ReplaySettings {
  readonly threshold: number;
}

/** The Domainator over one time-ordered stream of lines: which hosts it alerts, and by which name. */
class DomainatorRun {
  readonly alerted = new Map<string, string>();
  readonly #replay: DomainatorReplay;

  constructor(readonly settings: DomainatorSettings) {
    this.#replay = new DomainatorReplay(settings);
  }

  add(host: string, name: string, atMs: number): void {
    const score = this.#replay.add(host, name, atMs);
    if (score !== undefined && score >= this.settings.threshold && !this.alerted.has(host))
      this.alerted.set(host, name);
  }
}

export interface HostLevelResult {
  readonly infected: number;
  readonly infectedFound: number;
  /** Families whose host was not alerted. */
  readonly missed: string[];
  readonly benignHosts: number;
  readonly benignAccused: number;
  readonly hostHours: number;
  /** Names that made benign hosts' alerts (for the report). */
  readonly accusedNames: string[];
  readonly lines: number;
  /** With `domainator`: what the two detectors find together, as the shipped pipeline runs them. */
  readonly both?: {
    readonly infectedFound: number;
    readonly missed: string[];
    readonly benignAccused: number;
    /** Benign hosts only the Domainator accused, with the name that did it. */
    readonly domainatorAccusedNames: string[];
  };
}

/** Runs one seeded traffic through prefilter, scoring and the warning window. */
export function hostLevel(o: HostLevelOptions): HostLevelResult {
  const hosts = o.benignHosts + o.families.length;
  const traffic = generateTraffic({
    seed: o.seed,
    rate: hosts * o.perHostRate,
    durationSeconds: Math.round(o.hours * 3600),
    hosts,
    startMs: Date.UTC(2026, 10, 30),
    families: o.families,
    tunnel: false,
    benignNames: o.benignNames,
    browserProbes: o.browserProbes,
    ...(o.nxdomainShare === undefined ? {} : { nxdomainShare: o.nxdomainShare }),
  });
  const relevant: { host: string; name: string; at: number; id: string }[] = [];
  const tunnels = o.domainator && new DomainatorRun(o.domainator);
  let lines = 0;
  for (const g of traffic.lines()) {
    lines += 1;
    const line = JSON.parse(g.line) as { status_code: string; domain_name: string };
    tunnels?.add(g.srcIp, line.domain_name, g.atMs);
    if (line.status_code !== 'NXDOMAIN') continue;
    relevant.push({ host: g.srcIp, name: line.domain_name, at: g.atMs, id: String(lines) });
  }
  const scores = o.score(relevant.map((r) => r.name));
  const state = new Map<string, HostWindows<string>>();
  const windowLines: WindowLine<string>[] = relevant.map((r, i) => ({
    host: r.host,
    id: r.id,
    name: r.name,
    atMs: r.at,
    score: scores[i] ?? 0,
    payload: r.name,
  }));
  const alerted = new Map<string, string[]>();
  const settings = {
    threshold: o.threshold,
    minWarnings: o.minWarnings,
    windowMs: o.windowSeconds * 1000,
    latenessMs: o.windowSeconds * 1000,
    weak: o.weak,
    spread: o.spread,
  };
  // Fed in chunks of event time, as batches would bring them.
  for (let i = 0; i < windowLines.length; i += 5000) {
    const step = advanceWindows((h) => state.get(h), windowLines.slice(i, i + 5000), settings, 0);
    for (const [host, next] of step.hosts) {
      if (next) state.set(host, next);
      else state.delete(host);
    }
    for (const alert of step.alerts)
      alerted.set(alert.host, [...(alerted.get(alert.host) ?? []), ...alert.warnings.map((w) => w.payload)]);
  }
  const infected = traffic.truth.filter((h) => h.role === 'dga');
  const benign = traffic.truth.filter((h) => h.role === 'benign');
  const accused = benign.filter((h) => alerted.has(h.ip));
  const either = (ip: string) => alerted.has(ip) || (tunnels?.alerted.has(ip) ?? false);
  return {
    infected: infected.length,
    infectedFound: infected.filter((h) => alerted.has(h.ip)).length,
    missed: infected.filter((h) => !alerted.has(h.ip)).map((h) => (h.role === 'dga' ? h.family : '')),
    benignHosts: benign.length,
    benignAccused: accused.length,
    hostHours: benign.length * o.hours,
    accusedNames: [...new Set(accused.flatMap((h) => alerted.get(h.ip) ?? []))].slice(0, 20),
    lines,
    ...(tunnels && {
      both: {
        infectedFound: infected.filter((h) => either(h.ip)).length,
        missed: infected.filter((h) => !either(h.ip)).map((h) => (h.role === 'dga' ? h.family : '')),
        benignAccused: benign.filter((h) => either(h.ip)).length,
        domainatorAccusedNames: benign
          .filter((h) => !alerted.has(h.ip) && tunnels.alerted.has(h.ip))
          .map((h) => tunnels.alerted.get(h.ip) ?? ''),
      },
    }),
  };
}
