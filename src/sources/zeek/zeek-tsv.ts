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
 * Zeek's ASCII (TSV) log format: a header of `#` lines (`#separator \x09`, `#set_separator ,`,
 * `#empty_field (empty)`, `#unset_field -`, `#path`, `#open`, `#fields`, `#types`), tab-separated
 * rows, and `#close` at the end. Values escape non-printable bytes, the separator and (inside a set
 * or vector) the set separator as `\xHH`, and a backslash as `\\`. The header is the decoder's
 * memory: it is saved with the file position so a restart in the middle of a file still knows the
 * columns, and forgotten when a new file starts.
 */
export interface ZeekTsvHeader {
  readonly separator: string;
  readonly setSeparator: string;
  readonly emptyField: string;
  readonly unsetField: string;
  readonly fields?: readonly string[];
  readonly types?: readonly string[];
}

const DEFAULT_HEADER: ZeekTsvHeader = {
  separator: '\t',
  setSeparator: ',',
  emptyField: '(empty)',
  unsetField: '-',
};

/** `\xHH` and `\\` as Zeek's ASCII writer escapes them. */
export function unescapeZeek(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\(x[0-9a-fA-F]{2}|\\)/g, (_, escape: string) =>
    escape === '\\' ? '\\' : String.fromCharCode(parseInt(escape.slice(1), 16)),
  );
}

export function createZeekTsvDecoder(saved: unknown): LineDecoder {
  let header: ZeekTsvHeader = isHeader(saved) ? saved : DEFAULT_HEADER;
  return {
    decode(text: string, origin: LineOrigin): DecodeOutcome[] {
      if (text.startsWith('#')) {
        const next = headerLine(header, text);
        if (typeof next === 'string')
          return [{ kind: 'malformed', origin, reason: next, text: excerpt(text) }];
        header = next;
        return [{ kind: 'ignored', origin }];
      }
      return [decodeRow(header, text, origin)];
    },
    startFile() {
      header = DEFAULT_HEADER;
    },
    drain: () => [],
    save: () => header,
  };
}

function headerLine(header: ZeekTsvHeader, text: string): ZeekTsvHeader | string {
  if (text.startsWith('#separator ')) {
    const separator = unescapeZeek(text.slice('#separator '.length));
    return separator.length === 0 ? '#separator: empty' : { ...DEFAULT_HEADER, separator };
  }
  const parts = text.split(header.separator);
  const [directive = '', ...values] = parts;
  const value = unescapeZeek(values.join(header.separator));
  switch (directive) {
    case '#set_separator':
      return { ...header, setSeparator: value };
    case '#empty_field':
      return { ...header, emptyField: value };
    case '#unset_field':
      return { ...header, unsetField: value };
    case '#fields':
      return { ...header, fields: values };
    case '#types':
      return values.length === (header.fields?.length ?? -1)
        ? { ...header, types: values }
        : `#types: ${values.length} types for ${header.fields?.length ?? 0} fields`;
    default:
      // #path, #open, #close and anything a later Zeek adds: nothing a row depends on.
      return header;
  }
}

function decodeRow(header: ZeekTsvHeader, text: string, origin: LineOrigin): DecodeOutcome {
  const bad = (reason: string): DecodeOutcome => ({ kind: 'malformed', origin, reason, text: excerpt(text) });
  const { fields } = header;
  if (fields === undefined) return bad('a row before any #fields header');
  const columns = text.split(header.separator);
  if (columns.length !== fields.length)
    return bad(`${columns.length} columns where #fields names ${fields.length}`);
  const row = new Map<string, ZeekValue>();
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i] ?? '';
    row.set(name, value(header, header.types?.[i], columns[i] ?? ''));
  }
  const ts = row.get('ts');
  const micros = typeof ts === 'string' ? (epochSecondsToMicros(ts) ?? isoToMicros(ts)) : undefined;
  const decoded = observationOfZeekRow(row, micros);
  return decoded.ok ? { kind: 'observation', origin, observation: decoded.observation } : bad(decoded.reason);
}

function value(header: ZeekTsvHeader, type: string | undefined, raw: string): ZeekValue {
  if (raw === header.unsetField) return undefined;
  const container = type !== undefined && /^(set|vector)\[/.test(type);
  if (raw === header.emptyField) return container ? [] : '';
  if (!container) return unescapeZeek(raw);
  return raw.split(header.setSeparator).map(unescapeZeek);
}

function isHeader(saved: unknown): saved is ZeekTsvHeader {
  if (typeof saved !== 'object' || saved === null) return false;
  const h = saved as Record<string, unknown>;
  return ['separator', 'setSeparator', 'emptyField', 'unsetField'].every((k) => typeof h[k] === 'string');
}
