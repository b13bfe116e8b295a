import type { DetectorConfig } from '../../../config/index.ts';
import { MonitoringRowBatch } from '../../../monitoring/row-batch.ts';
import type { KeyValueStore, ProcessResult, Stage, StageOutput } from '../../../runtime/index.ts';
import { domainOf, ownLines, type ScoredLine } from '../alerts.ts';
import { decodeBatch } from '../../messages.ts';
import {
  DETECTOR_STAGE,
  detectorOutputs,
  detectorOutputTopics,
  type DetectorTopics,
} from '../detector-outputs.ts';
import { windowDomain } from './grouping.ts';
import { lengthEvidence, tunnellingScore, windowFeatures } from './similarity.ts';

/**
 * One request in a window: its subdomain, all the score reads. (Windows stored before also hold the
 * request's logline_id, which nothing read; it doubled the bytes of every window's changelog record.)
 */
interface WindowEntry {
  readonly subdomain: string;
}

/** A sliding window of one host's requests under one registrable domain. */
export interface DomainWindow {
  readonly entries: WindowEntry[];
  /** Wall-clock time of the last request (ms), for expiry. */
  lastSeen: number;
}

export const WINDOWS_STORE = 'domainator_windows';

/** Store key of a window: registrable domain and host (input is keyed by host, so both stay together). */
export function windowKey(registrable: string, srcIp: string): string {
  return `${registrable}\u0000${srcIp}`;
}

export interface DomainatorOptions {
  /** One entry of `pipeline.data_analysis` with `detector_class_name: DomainatorDetector`. */
  readonly detector: DetectorConfig;
  readonly topics: DetectorTopics;
  readonly instanceName?: string;
  readonly clock?: () => number;
}

/**
 * Adds a request to its window (dropping the oldest beyond `max_window`) and scores the window
 * once it holds `min_window` requests; the score belongs to the request that completed it. Names
 * without a window (see `windowDomain`: no subdomain, reverse DNS, block-list and reputation
 * lookups) are not scored.
 *
 * `floor`: the caller acts only on scores at or above it (the stage's `threshold`), so a window
 * whose score cannot reach it is not scored. The score never exceeds its length evidence
 * (`tunnellingScore`), which costs a sum of lengths; the mutual similarity of a full window costs
 * 45 edit distances, and benign windows of short host names were most of the stage's scoring.
 */
export function observe(
  store: KeyValueStore<DomainWindow>,
  line: { src_ip: string; domain_name: string },
  o: {
    minWindow: number;
    maxWindow: number;
    now: number;
    searchDomains?: readonly string[];
    floor?: number;
  },
): { score: number; window: string[] } | undefined {
  const parts = windowDomain(line.domain_name, o.searchDomains);
  if (parts === undefined) return undefined;
  const { registrable, subdomain: thirdLevel } = parts;
  const key = windowKey(registrable, line.src_ip);
  const window = store.get(key) ?? { entries: [], lastSeen: o.now };
  // Entries of windows stored before keep their logline_id until they slide out.
  const entries = [...window.entries, { subdomain: thirdLevel }].slice(-o.maxWindow);
  store.put(key, { entries, lastSeen: o.now });
  if (entries.length < o.minWindow) return undefined;
  const subdomains = entries.map((e) => e.subdomain);
  if (o.floor !== undefined && lengthEvidence(subdomains) < o.floor) return undefined;
  return { score: tunnellingScore(windowFeatures(subdomains)), window: subdomains };
}

/** The timer's interval: often enough to drop idle windows soon after `idleMs`, at most once a minute. */
export function expiryIntervalMs(idleMs: number): number {
  return Math.max(1000, Math.min(idleMs, 60_000));
}

/** Drops the windows without a request for more than `idleMs` (what the timer does). */
export function expireIdle(store: KeyValueStore<DomainWindow>, now: number, idleMs: number): void {
  const idle = [...store.range()].filter(([, w]) => now - w.lastSeen > idleMs).map(([k]) => k);
  for (const key of idle) store.delete(key);
}

/**
 * The Domainator detector: per host and registrable domain, a sliding window of 3..10 requests in
 * a state store (so windows survive restarts and rebalances with the input offsets), scored by
 * subdomain length, randomness, distinctness and mutual similarity. Alerts have the DGA
 * detector's shape. A timer drops windows idle longer than `idle_timeout_seconds`.
 */
export function createDomainator(o: DomainatorOptions): Stage {
  const clock = o.clock ?? Date.now;
  const {
    min_window: minWindow,
    max_window: maxWindow,
    idle_timeout_seconds,
    search_domains: searchDomains,
  } = o.detector.domainator;
  const idleMs = idle_timeout_seconds * 1000;
  const instanceName = o.instanceName ?? o.detector.name;
  return {
    name: DETECTOR_STAGE,
    shortName: 'detector',
    inputTopics: [o.topics.input],
    outputTopics: detectorOutputTopics(o.topics),
    stores: { [WINDOWS_STORE]: {} },
    timer: { intervalMs: expiryIntervalMs(idleMs) },
    process(records, ctx): ProcessResult {
      const outputs: StageOutput[] = [];
      const rows = new MonitoringRowBatch(o.topics.monitoringPrefix);
      const failures: ProcessResult['failures'] = [];
      for (const record of records) {
        let batch;
        try {
          batch = decodeBatch(record.value);
        } catch (e) {
          failures.push({ record, error: e });
          continue;
        }
        const store = ctx.state(record.partition).store<DomainWindow>(WINDOWS_STORE);
        const now = clock();
        // Lines come sorted by time; context lines were observed with their first batch.
        const lines = ownLines(batch);
        const scored: ScoredLine[] = [];
        for (const line of lines) {
          const domain = domainOf(line);
          const result =
            domain === undefined
              ? undefined
              : observe(
                  store,
                  { src_ip: line.src_ip, domain_name: domain },
                  { minWindow, maxWindow, now, searchDomains, floor: o.detector.threshold },
                );
          scored.push({
            line,
            score: result?.score ?? 0,
            ...(result ? { evidence: { window: result.window } } : {}),
          });
        }
        outputs.push(
          ...detectorOutputs({
            source: record,
            batch,
            scored,
            detector: o.detector,
            topics: o.topics,
            instanceName,
            now,
            rows,
          }),
        );
      }
      outputs.push(...rows.outputs());
      return { outputs, failures };
    },
    onTimer(ctx): ProcessResult {
      expireIdle(ctx.state.store<DomainWindow>(WINDOWS_STORE), ctx.now, idleMs);
      return { outputs: [] };
    },
  };
}
