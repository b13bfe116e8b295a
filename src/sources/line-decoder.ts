import type { DnsObservation } from './dns-observation.ts';

/**
 * A decoder of a line-oriented log file (Zeek `dns.log`, Suricata EVE) into observations. Files are
 * read exactly once by a caller that commits its position with its outputs, so a decoder's memory
 * (a TSV header, queries awaiting their answer) is plain JSON data the caller stores with that
 * position: `createDecoder(saved)` followed by the same lines gives the same outcomes, which is
 * what makes a replay after an aborted transaction or a restart produce the same lines.
 *
 * Every line ends as outcomes naming the line they came from (`origin`), at most one observation
 * per origin, so a caller can key its records by origin: an observation built from several lines
 * (a query and its answer, the answers of one response) is named by one of them.
 */
export interface LineOrigin {
  /** The file the line was read from, as the caller names it (for example `dev:ino`). */
  readonly file: string;
  readonly offset: number;
}

export type DecodeOutcome =
  | { readonly kind: 'observation'; readonly origin: LineOrigin; readonly observation: DnsObservation }
  | {
      readonly kind: 'malformed';
      readonly origin: LineOrigin;
      readonly reason: string;
      readonly text: string;
    }
  /** A well-formed line that carries no transaction to report (a header, another event type, a query awaiting its answer). */
  | { readonly kind: 'ignored'; readonly origin: LineOrigin };

export interface LineDecoder {
  /** Outcomes of one line (a header line yields `ignored`; a line may also release earlier ones). */
  decode(text: string, origin: LineOrigin): DecodeOutcome[];
  /** A new file starts (rotation): per-file memory such as a TSV header is forgotten. */
  startFile(): void;
  /** The caller read all there is for now: outcomes held for a following line are released. */
  drain(): DecodeOutcome[];
  /** The decoder's memory as JSON data, to store with the file position. */
  save(): unknown;
}

export type LineDecoderFactory = (saved: unknown) => LineDecoder;

/** A printable excerpt of a bad line for the record of its failure. */
export function excerpt(text: string, max = 512): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

/** Epoch seconds with up to 9 fraction digits (`1700000000.123456`) as whole microseconds, exactly. */
export function epochSecondsToMicros(text: string): number | undefined {
  const match = /^(\d{1,12})(?:\.(\d{1,9}))?$/.exec(text);
  if (!match) return undefined;
  const [, seconds = '0', fraction = ''] = match;
  return Number(seconds) * 1_000_000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

/**
 * An ISO 8601 time as Zeek (`2026-12-01T10:00:00.123456Z`) and Suricata
 * (`2026-12-01T10:00:00.123456+0100`) write it, as epoch microseconds; undefined when it is not one.
 */
export function isoToMicros(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(
    text,
  );
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zone = 'Z'] = match;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms)) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const sign = digits.startsWith('-') ? -1 : 1;
    offsetMinutes = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
  }
  return (ms - offsetMinutes * 60_000) * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}
