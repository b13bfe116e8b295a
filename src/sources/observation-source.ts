import type { DnsObservation } from './dns-observation.ts';

/**
 * Counters every source keeps, exposed as metrics and on the dashboard. `received` counts units as
 * the source reads them (frames, rows, packets); each ends as exactly one of `forwarded`, `dropped`
 * (the sensor's buffer was full while Kafka was slow or down) or `malformed` (with a logged reason),
 * or is still in flight. `ignored` counts well-formed units that carry no DNS transaction to report
 * (a dnstap message type the source is not configured for, a query whose response is still awaited).
 */
export interface SourceCounters {
  received: number;
  forwarded: number;
  dropped: number;
  malformed: number;
  ignored: number;
}

/**
 * Where a source hands its observations. Returns false when the source should stop reading (its
 * consumer's buffer is full): a source that can (a socket) pauses until `resume` is called; one
 * that cannot goes on, and what does not fit is dropped and counted by the consumer.
 */
export type ObservationSink = (observation: DnsObservation) => boolean;

/** Why a unit was counted as malformed, for the log line that reports it (rate-limited by the caller). */
export interface MalformedUnit {
  readonly reason: string;
  /** A short, printable excerpt of the unit, at most a few hundred bytes; never the whole unit. */
  readonly excerpt?: string;
}

/**
 * A live source (a socket or an interface) that cannot replay: once `start` resolves it pushes
 * observations to the sink until `stop`. A source never throws for a bad unit: it reports it to
 * `onMalformed` and goes on.
 */
export interface ObservationSource {
  readonly kind: string;
  start(sink: ObservationSink, onMalformed: (unit: MalformedUnit) => void): Promise<void>;
  /** Reading again after the sink returned false (the consumer's buffer drained, or it drops now). */
  resume?(): void;
  /** Stops reading; resolves once no more observations will reach the sink. */
  stop(): Promise<void>;
  readonly counters: Readonly<SourceCounters>;
}
