import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError, KafkaOperation } from './kafka-error.ts';

/**
 * Two librdkafka defects (2.15, both open upstream) leave a client stuck for good after a broker
 * fault, with nothing reported: a consumer just gets no records, a producer's calls just time out.
 * Only a new client recovers. Both show in the client's statistics, which every client the runtime
 * creates reports every STATS_INTERVAL_MS; the watch reads them.
 *
 * - No broker left (librdkafka #5301): librdkafka drops every broker a Metadata response does not
 *   list. A KRaft broker fenced by a long pause answers with zero brokers for a moment after it
 *   comes back; a client whose metadata request lands then forgets its only broker, never sends
 *   another request and never re-bootstraps. Decided when two reports in a row list no configured
 *   or learned broker.
 * - Assigned partitions that never start fetching (librdkafka #5586): an OffsetFetch answered with
 *   a request-level NOT_COORDINATOR (the coordinator moving, e.g. right after such a fence) leaves
 *   the partitions waiting for a committed offset that is never asked again. Decided when a
 *   partition has been assigned without a fetcher for FETCH_START_DEADLINE_MS.
 */
export const STATS_INTERVAL_MS = 2_000;
const REPORTS_TO_DECIDE = 2;
/** Far above a normal offset fetch (milliseconds), and than librdkafka's own retries of one. */
export const FETCH_START_DEADLINE_MS = 20_000;

interface Stats {
  brokers?: Record<string, { source?: string }>;
  topics?: Record<string, { partitions?: Record<string, { desired?: boolean; fetch_state?: string }> }>;
}

function parse(statsJson: string): Stats | undefined {
  try {
    return JSON.parse(statsJson) as Stats;
  } catch {
    return undefined;
  }
}

/** True when the statistics list no real broker (only internal or logical ones). */
export function knowsNoBroker(statsJson: string): boolean {
  const stats = parse(statsJson);
  if (!stats) return false;
  const brokers = Object.values(stats.brokers ?? {});
  return !brokers.some((b) => b.source === 'learned' || b.source === 'configured');
}

/** `topic/partition` of every partition the application assigned that has no fetcher running. */
export function assignedWithoutFetcher(statsJson: string): string[] {
  const stuck: string[] = [];
  for (const [topic, t] of Object.entries(parse(statsJson)?.topics ?? {}))
    for (const [partition, p] of Object.entries(t.partitions ?? {}))
      if (p.desired === true && p.fetch_state === 'none') stuck.push(`${topic}/${partition}`);
  return stuck;
}

const strandedErrors = new WeakSet<KafkaError>();

/** Whether `err` is the report of a stranded client (rather than librdkafka's own all-brokers-down). */
export function isStrandedError(err: KafkaError): boolean {
  return strandedErrors.has(err);
}

export type StrandedReason = 'no-broker' | 'fetch-never-started';

const EXPLANATION: Record<StrandedReason, string> = {
  'no-broker': 'the client forgot every broker after a metadata response listed none (librdkafka #5301)',
  'fetch-never-started': `assigned partitions have not started fetching for ${FETCH_START_DEADLINE_MS / 1000} s after an offset fetch failed (librdkafka #5586)`,
};

/**
 * The error a stranded client reports. Its code is `_ALL_BROKERS_DOWN` so that it classifies as a
 * transport error (the runtime then replaces its clients); the message says what really happened.
 */
export function strandedError(operation: KafkaOperation, reason: StrandedReason = 'no-broker'): KafkaError {
  const err = classifyKafkaError(
    {
      code: code('_ALL_BROKERS_DOWN'),
      message: `${EXPLANATION[reason]}; the client can never recover and must be replaced`,
    },
    operation,
  );
  strandedErrors.add(err);
  return err;
}

/** A client that emits librdkafka's statistics (both client kinds of the binding do). */
export interface StatsSource {
  on(event: 'event.stats', listener: (event: { message: string }) => void): unknown;
}

/**
 * Calls `onStranded` once, when the client is found stranded. `consumer` adds the check for
 * assigned partitions that never start fetching; `now` is the clock (tests).
 */
export function watchForStranding(
  native: StatsSource,
  onStranded: (reason: StrandedReason) => void,
  o: { consumer?: boolean; now?: () => number } = {},
): void {
  const now = o.now ?? Date.now;
  let noBrokerReports = 0;
  /** When each partition was first seen assigned without a fetcher (in consecutive reports). */
  let since = new Map<string, number>();
  let reported = false;
  native.on('event.stats', (event) => {
    if (reported) return;
    noBrokerReports = knowsNoBroker(event.message) ? noBrokerReports + 1 : 0;
    let reason: StrandedReason | undefined;
    if (noBrokerReports >= REPORTS_TO_DECIDE) reason = 'no-broker';
    if (o.consumer) {
      const t = now();
      since = new Map(assignedWithoutFetcher(event.message).map((k) => [k, since.get(k) ?? t]));
      if ([...since.values()].some((first) => t - first >= FETCH_START_DEADLINE_MS))
        reason ??= 'fetch-never-started';
    }
    if (reason) {
      reported = true;
      onStranded(reason);
    }
  });
}
