import { scrubSecrets } from '../../errors/secrets.ts';
import type { StageOutput, StageRecord } from '../stage.ts';

/** Header names of a dead letter; `hamstring dlt replay` reads them back. */
export const DLT_HEADERS = {
  topic: 'hamstring.dlt.original.topic',
  partition: 'hamstring.dlt.original.partition',
  offset: 'hamstring.dlt.original.offset',
  timestamp: 'hamstring.dlt.original.timestamp',
  key: 'hamstring.dlt.original.key',
  group: 'hamstring.dlt.group',
  stage: 'hamstring.dlt.stage',
  errorKind: 'hamstring.dlt.error.kind',
  errorClass: 'hamstring.dlt.error.class',
  errorMessage: 'hamstring.dlt.error.message',
  errorStack: 'hamstring.dlt.error.stack',
  attempts: 'hamstring.dlt.attempts',
  firstFailure: 'hamstring.dlt.first.failure',
  lastFailure: 'hamstring.dlt.last.failure',
} as const;

/** Headers only a dead letter cut to fit the size limit carries (see `fitDeadLetter`). */
export const DLT_TRUNCATION_HEADERS = {
  /** What was cut, e.g. `value,stack`. */
  truncated: 'hamstring.dlt.truncated',
  /** The original value's size in bytes. */
  valueBytes: 'hamstring.dlt.original.value.bytes',
} as const;

/**
 * Default size limit of a dead letter: librdkafka's `message.max.bytes` default, below the broker's
 * default `max.message.bytes` (1 MiB + 12). A record just under the limit would otherwise fail again
 * as a dead letter, whose headers make it larger.
 */
export const DEAD_LETTER_MAX_BYTES = 1_000_000;

/** Bytes a record costs beyond key, value and headers (record batch header, varints), rounded up. */
const RECORD_OVERHEAD = 128;
const HEADER_OVERHEAD = 10;

const STACK_LIMIT = 2_000;

export interface DeadLetterInfo {
  group: string;
  stage: string;
  /** A classification kind (`failureKind`, a Kafka error kind, `decode`, ...), never a class name. */
  errorKind: string;
  error: unknown;
  attempts: number;
  firstFailure: number;
  lastFailure: number;
  /** The dead letter is cut to this many bytes (see `fitDeadLetter`); default DEAD_LETTER_MAX_BYTES. */
  maxBytes?: number;
}

/**
 * The dead letter of `record`: its key and value unchanged, the why in headers; cut to fit
 * `info.maxBytes` when it would not (see `fitDeadLetter`).
 */
export function deadLetterOf(record: StageRecord, topic: string, info: DeadLetterInfo): StageOutput {
  const err = info.error instanceof Error ? info.error : new Error(String(info.error));
  const headers: Record<string, Buffer | string> = {
    ...record.headers,
    [DLT_HEADERS.topic]: record.topic,
    [DLT_HEADERS.partition]: String(record.partition),
    [DLT_HEADERS.offset]: String(record.offset),
    [DLT_HEADERS.timestamp]: String(record.timestamp ?? ''),
    [DLT_HEADERS.group]: info.group,
    [DLT_HEADERS.stage]: info.stage,
    [DLT_HEADERS.errorKind]: info.errorKind,
    [DLT_HEADERS.errorClass]: err.name,
    // A client's error may echo its configuration: no registered secret goes into a header.
    [DLT_HEADERS.errorMessage]: scrubSecrets(err.message),
    [DLT_HEADERS.errorStack]: scrubSecrets((err.stack ?? '').slice(0, STACK_LIMIT)),
    [DLT_HEADERS.attempts]: String(info.attempts),
    [DLT_HEADERS.firstFailure]: new Date(info.firstFailure).toISOString(),
    [DLT_HEADERS.lastFailure]: new Date(info.lastFailure).toISOString(),
  };
  if (record.key !== null) headers[DLT_HEADERS.key] = record.key;
  return fitDeadLetter({ topic, key: record.key, value: record.value, headers }, info.maxBytes);
}

const bytes = (v: Buffer | string | null | undefined): number =>
  v === null || v === undefined ? 0 : Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v);

/** Estimated size of a record on the wire (uncompressed), as the broker and librdkafka count it. */
export function recordBytes(o: Pick<StageOutput, 'key' | 'value' | 'headers'>): number {
  let n = RECORD_OVERHEAD + bytes(o.key) + bytes(o.value);
  for (const [k, v] of Object.entries(o.headers ?? {})) n += HEADER_OVERHEAD + bytes(k) + bytes(v);
  return n;
}

/** `text` cut to at most `max` bytes of UTF-8 without splitting a character. */
function cutText(text: string, limit: number): string {
  const max = Math.max(0, limit);
  if (Buffer.byteLength(text) <= max) return text;
  let cut = Buffer.from(text).subarray(0, max).toString('utf8');
  while (Buffer.byteLength(cut) > max) cut = cut.slice(0, -1);
  return cut;
}

const cutValue = (v: Buffer | string, max: number): Buffer | string =>
  Buffer.isBuffer(v) ? v.subarray(0, Math.max(0, max)) : cutText(v, max);

/**
 * A dead letter cut to fit `maxBytes`: first the value, then the error stack and message headers,
 * then the copied headers of the original record, each only as far as needed. What was cut is named
 * in the `hamstring.dlt.truncated` header, and the original value size in
 * `hamstring.dlt.original.value.bytes`, so a reader knows the payload is incomplete. A dead letter
 * that fits is returned unchanged.
 */
export function fitDeadLetter(o: StageOutput, maxBytes = DEAD_LETTER_MAX_BYTES): StageOutput {
  if (recordBytes(o) <= maxBytes) return o;
  const cut: string[] = [];
  const headers: Record<string, Buffer | string> = {
    ...o.headers,
    // The longest list it can become, so that writing the real (shorter) list cannot overflow.
    [DLT_TRUNCATION_HEADERS.truncated]: 'value,stack,message,headers,key-header',
    [DLT_TRUNCATION_HEADERS.valueBytes]: String(bytes(o.value)),
  };
  let value = o.value;
  const excess = () => recordBytes({ key: o.key, value, headers }) - maxBytes;
  if (value !== null && excess() > 0) {
    value = cutValue(value, bytes(value) - excess());
    cut.push('value');
  }
  for (const [name, part] of [
    [DLT_HEADERS.errorStack, 'stack'],
    [DLT_HEADERS.errorMessage, 'message'],
  ] as const) {
    const text = headers[name];
    if (text === undefined || excess() <= 0) continue;
    headers[name] = cutValue(text, bytes(text) - excess());
    cut.push(part);
  }
  const own = new Set<string>([...Object.values(DLT_HEADERS), ...Object.values(DLT_TRUNCATION_HEADERS)]);
  for (const name of Object.keys(headers)) {
    if (excess() <= 0) break;
    if (own.has(name)) continue;
    delete headers[name];
    if (!cut.includes('headers')) cut.push('headers');
  }
  if (excess() > 0 && headers[DLT_HEADERS.key] !== undefined) {
    // The key itself stays: it is the record's identity and its partitioning.
    delete headers[DLT_HEADERS.key];
    cut.push('key-header');
  }
  headers[DLT_TRUNCATION_HEADERS.truncated] = cut.join(',');
  return { ...o, value, headers };
}
