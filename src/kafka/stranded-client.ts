import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError, KafkaOperation } from './kafka-error.ts';

/**
 * librdkafka (2.10 and later, still in 2.15) drops every broker that a Metadata response does not
 * list. A KRaft broker that was fenced (paused or cut off longer than broker.session.timeout.ms)
 * answers with zero brokers for a moment after it comes back; a client whose metadata request lands
 * in that moment forgets its only broker, never sends another request and so never re-bootstraps:
 * it is stranded for good (librdkafka #5301, fix #5303 unmerged). Nothing is reported: a consumer
 * just never joins, a producer's records just time out.
 *
 * The watch reads the client's statistics: a client that knows no broker at all (neither a
 * configured bootstrap broker nor a learned one) in two reports in a row is stranded, and only a
 * new client can continue. Every client the runtime creates carries the watch.
 */
export const STATS_INTERVAL_MS = 2_000;
const REPORTS_TO_DECIDE = 2;

interface StatsBroker {
  source?: string;
}

/** True when the statistics JSON lists no real broker (only internal or logical ones). */
export function knowsNoBroker(statsJson: string): boolean {
  let stats: { brokers?: Record<string, StatsBroker> };
  try {
    stats = JSON.parse(statsJson) as typeof stats;
  } catch {
    return false;
  }
  const brokers = Object.values(stats.brokers ?? {});
  return !brokers.some((b) => b.source === 'learned' || b.source === 'configured');
}

const strandedErrors = new WeakSet<KafkaError>();

/** Whether `err` is the report of a stranded client (rather than librdkafka's own all-brokers-down). */
export function isStrandedError(err: KafkaError): boolean {
  return strandedErrors.has(err);
}

/** The error a stranded client reports: transport, so the runtime replaces the client. */
export function strandedError(operation: KafkaOperation): KafkaError {
  const err = classifyKafkaError(
    {
      code: code('_ALL_BROKERS_DOWN'),
      message:
        'the client forgot every broker after a metadata response listed none (librdkafka #5301); ' +
        'it can never reconnect and must be replaced',
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

/** Calls `onStranded` once, when the client has known no broker for two statistics reports. */
export function watchForStranding(native: StatsSource, onStranded: () => void): void {
  let strandedReports = 0;
  let reported = false;
  native.on('event.stats', (event) => {
    if (reported) return;
    strandedReports = knowsNoBroker(event.message) ? strandedReports + 1 : 0;
    if (strandedReports >= REPORTS_TO_DECIDE) {
      reported = true;
      onStranded();
    }
  });
}
