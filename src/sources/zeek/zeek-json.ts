import {
  excerpt,
  epochSecondsToMicros,
  isoToMicros,
  type DecodeOutcome,
  type LineDecoder,
  type LineOrigin,
} from '../line-decoder.ts';
import { observationOfZeekRow, type ZeekValue } from './zeek-dns-record.ts';

/**
 * Zeek's JSON logs (`LogAscii::use_json = T`): one object per line with the TSV format's field
 * names as keys (`"id.orig_h"` flat, not nested); unset fields are left out; `ts` is epoch seconds
 * (`JSON::TS_EPOCH`, the default) or an ISO 8601 string (`JSON::TS_ISO8601`). Stateless.
 */
export function createZeekJsonDecoder(): LineDecoder {
  return {
    decode: (text: string, origin: LineOrigin): DecodeOutcome[] => [decodeZeekJson(text, origin)],
    startFile() {},
    drain: () => [],
    save: () => null,
  };
}

function decodeZeekJson(text: string, origin: LineOrigin): DecodeOutcome {
  const bad = (reason: string): DecodeOutcome => ({ kind: 'malformed', origin, reason, text: excerpt(text) });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return bad('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return bad('not a JSON object');
  const row = new Map<string, ZeekValue>();
  for (const [key, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof raw === 'string') row.set(key, raw);
    else if (typeof raw === 'number' || typeof raw === 'boolean') row.set(key, String(raw));
    else if (Array.isArray(raw)) row.set(key, raw.map(String));
  }
  const ts = (parsed as Record<string, unknown>).ts;
  const micros =
    typeof ts === 'number' && Number.isFinite(ts) && ts >= 0
      ? epochSecondsToMicros(ts.toFixed(6))
      : typeof ts === 'string'
        ? isoToMicros(ts)
        : undefined;
  const decoded = observationOfZeekRow(row, micros);
  return decoded.ok ? { kind: 'observation', origin, observation: decoded.observation } : bad(decoded.reason);
}
