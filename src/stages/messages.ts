/**
 * The messages the pipeline stages hand to each other, with the shapes of the Python system so that
 * its users recognise them on the topics: a Batch travels collector -> prefilter -> inspector ->
 * detector (keyed by subnet_id, then src_ip), an Alert detector -> alerter -> outside (keyed by
 * src_ip). Decoders validate at the boundary: a record that does not decode is a `DecodeError`
 * (dead-lettered at once, never retried).
 */
import { z } from 'zod';
import { DecodeError } from '../runtime/index.ts';

/**
 * One validated log line. Its configured fields (strings, as in the input JSON) and any extra fields
 * of the input pass through; the collector adds `logline_id` and `subnet_id`.
 *
 * `ts` differs from the Python system on purpose: the collector rewrites it from the configured
 * strptime format to ISO-8601 UTC with microseconds (`2026-11-30T00:00:00.123456Z`), so that no
 * later stage needs the collector's format (the Python stages hard-code one format downstream).
 */
export type LogLine = {
  /** Derived from the line's position in the collector's input (topic, partition, offset). */
  readonly logline_id: string;
  /** Network of `src_ip` under the collector's prefix length: `<net>_<len>`, e.g. `10.2.54.0_24`. */
  readonly subnet_id: string;
  /** ISO-8601 UTC, microsecond precision. */
  readonly ts: string;
  readonly src_ip: string;
} & { readonly [field: string]: unknown };

/**
 * A batch of log lines of one subnet (collector, prefilter, inspector) or of one host (a suspicious
 * batch from the inspector). `data` is sorted by `ts`, then `logline_id`.
 */
export interface Batch {
  /** Identity of this batch's `batch_tree` row (its lineage: stage, parent row). */
  readonly batch_tree_row_id: string;
  /** Derived from the source positions of the lines the batch was made of (UUID-shaped, not random). */
  readonly batch_id: string;
  /** `ts` of the first line of `data` (ISO-8601 UTC). */
  readonly begin_timestamp: string;
  /** `ts` of the last line of `data`. */
  readonly end_timestamp: string;
  readonly data: readonly LogLine[];
  /**
   * Not in the Python system: `logline_id`s of the lines in `data` that the collector carried over
   * from the subnet's previous batch as context. Stages record monitoring rows only for the other
   * lines, so each line's rows appear once. Absent: no context lines.
   */
  readonly context_logline_ids?: readonly string[];
}

/** One finding of a detector about one request of a suspicious batch. */
export type AlertWarning = {
  readonly request: LogLine;
  /** The detector's malicious probability (or score) for this request, 0..1. */
  readonly probability: number;
} & { readonly [field: string]: unknown };

/** What a detector reports about one host. */
export interface Alert {
  /** Median of the malicious probabilities of `result`. */
  readonly overall_score: number;
  readonly result: readonly AlertWarning[];
  readonly src_ip: string;
  /** ISO-8601 UTC. */
  readonly alert_timestamp: string;
  readonly suspicious_batch_id: string;
  readonly detector_name: string;
  /**
   * Not in the Python system: the event-time window (ISO-8601 UTC, end exclusive) whose warnings
   * raised the alert (DGA detector). It names the alert: a window alerts once per host, and the
   * alert id derives from it instead of the suspicious batch, which depends on arrival.
   */
  readonly window_start?: string;
  readonly window_end?: string;
  /**
   * Not in the Python system: the kind of DGA the host's names look most like (`hash DGA`,
   * `dictionary DGA`, ...) and the share of the model's kind votes it got, 0..1 (DGA detector).
   */
  readonly kind?: string;
  readonly kind_confidence?: number;
}

const logLineSchema = z.looseObject({
  logline_id: z.string(),
  subnet_id: z.string(),
  ts: z.iso.datetime(),
  src_ip: z.string(),
});

export const batchSchema = z.strictObject({
  batch_tree_row_id: z.string(),
  batch_id: z.string(),
  begin_timestamp: z.string(),
  end_timestamp: z.string(),
  data: z.array(logLineSchema),
  context_logline_ids: z.array(z.string()).optional(),
});

const alertSchema = z.strictObject({
  overall_score: z.number(),
  result: z.array(z.looseObject({ request: logLineSchema, probability: z.number() })),
  src_ip: z.string(),
  alert_timestamp: z.string(),
  suspicious_batch_id: z.string(),
  detector_name: z.string(),
  window_start: z.iso.datetime().optional(),
  window_end: z.iso.datetime().optional(),
  kind: z.string().optional(),
  kind_confidence: z.number().min(0).max(1).optional(),
});

export function encodeBatch(batch: Batch): string {
  return JSON.stringify(batch);
}

/** A batch whose lines are JSON texts already, each line's `JSON.stringify` (see {@link encodeBatchText}). */
export type BatchText = Omit<Batch, 'data'> & { readonly data: readonly string[] };

/**
 * The same text as {@link encodeBatch} of the batch whose lines `data` holds as JSON: the collector
 * keeps each line's text and splices it in rather than serialising the line again for every batch.
 */
export function encodeBatchText(batch: BatchText): string {
  const head = JSON.stringify({
    batch_tree_row_id: batch.batch_tree_row_id,
    batch_id: batch.batch_id,
    begin_timestamp: batch.begin_timestamp,
    end_timestamp: batch.end_timestamp,
  });
  const context =
    batch.context_logline_ids === undefined
      ? ''
      : `,"context_logline_ids":${JSON.stringify(batch.context_logline_ids)}`;
  return `${head.slice(0, -1)},"data":[${batch.data.join(',')}]${context}}`;
}

/** @throws {DecodeError} when the value is not a Batch. */
export function decodeBatch(value: Buffer | string | null): Batch {
  return decode(batchSchema, value, 'Batch', wellFormedBatch) as Batch;
}

/** The regex of `z.iso.datetime()`, which `logLineSchema` checks `ts` with. */
const ISO_DATETIME = z.regexes.datetime({});
const BATCH_KEYS = new Set(Object.keys(batchSchema.shape));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True when `batch` certainly passes `batchSchema`, checked by hand: every stage after the collector
 * decodes every batch, and zod's copy of each line was a twentieth of the pipeline. False means only
 * that the schema must decide (and explain).
 */
export function wellFormedBatch(batch: unknown): boolean {
  if (!isObject(batch)) return false;
  for (const key in batch) if (!BATCH_KEYS.has(key)) return false;
  const { data, context_logline_ids: context } = batch;
  if (
    typeof batch.batch_tree_row_id !== 'string' ||
    typeof batch.batch_id !== 'string' ||
    typeof batch.begin_timestamp !== 'string' ||
    typeof batch.end_timestamp !== 'string' ||
    !Array.isArray(data) ||
    (context !== undefined && !(Array.isArray(context) && context.every((id) => typeof id === 'string')))
  )
    return false;
  for (const line of data as unknown[]) {
    if (
      !isObject(line) ||
      typeof line.logline_id !== 'string' ||
      typeof line.subnet_id !== 'string' ||
      typeof line.src_ip !== 'string' ||
      typeof line.ts !== 'string' ||
      !ISO_DATETIME.test(line.ts)
    )
      return false;
  }
  return true;
}

export function encodeAlert(alert: Alert): string {
  return JSON.stringify(alert);
}

/** @throws {DecodeError} when the value is not an Alert. */
export function decodeAlert(value: Buffer | string | null): Alert {
  return decode(alertSchema, value, 'Alert') as Alert;
}

function decode(
  schema: z.ZodType,
  value: Buffer | string | null,
  what: string,
  certain: (parsed: unknown) => boolean = () => false,
): unknown {
  if (value === null) throw new DecodeError(`${what}: empty record value`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'));
  } catch (error) {
    throw new DecodeError(`${what}: not JSON`, { cause: error });
  }
  if (certain(parsed)) return parsed;
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const first = result.error.issues[0];
    throw new DecodeError(`${what}: ${first ? `${first.path.join('.')}: ${first.message}` : 'invalid'}`);
  }
  return result.data;
}

/**
 * Microseconds since the epoch of a `ts` / `begin_timestamp` as the collector writes them
 * (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`); `Date.parse` would drop the microseconds.
 */
export function timestampMicros(iso: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!match) return Date.parse(iso) * 1000;
  const seconds = Date.parse(`${match[1]}Z`);
  return seconds * 1000 + Number((match[2] ?? '').padEnd(6, '0'));
}

/** `micros` (since the epoch) as ISO-8601 UTC with six fraction digits. */
export function isoFromMicros(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  // Lines come in runs of the same second: the date and time are formatted once per run.
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return `${lastSecondText}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

let lastSecond = Number.NaN;
let lastSecondText = '';

/** Orders lines by `ts`, then `logline_id` (a total order, so every replay sorts the same way). */
export function compareLines(a: LogLine, b: LogLine): number {
  const byTime = timestampMicros(a.ts) - timestampMicros(b.ts);
  if (byTime !== 0) return byTime;
  return a.logline_id < b.logline_id ? -1 : a.logline_id > b.logline_id ? 1 : 0;
}
