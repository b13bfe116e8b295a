import { isIP } from 'node:net';
import { RE2JS } from 're2js';
import type { LogField } from '../../config/index.ts';
import { compileStrptime } from './strptime.ts';

/** Bounds that make a hostile line cost no more than any other bad line. */
export interface LineLimits {
  /** Longer lines are refused before decoding (the collector's `max_line_bytes`). */
  readonly maxLineBytes: number;
  /** Deeper JSON is refused before parsing, so nothing later recurses through it. */
  readonly maxDepth: number;
}

export const DEFAULT_MAX_JSON_DEPTH = 32;

export type LineVerdict =
  | {
      readonly ok: true;
      /** The line's JSON object: configured fields (all strings) and any extra fields. */
      readonly fields: Readonly<Record<string, unknown>>;
      /** `ts` in microseconds since the epoch. */
      readonly tsMicros: number;
      readonly srcIp: string;
    }
  | { readonly ok: false; readonly reason: string };

/** Checks one raw line; never throws (every problem is a verdict with a reason). */
export type LineValidator = (raw: Buffer | null) => LineVerdict;

type FieldCheck = (value: string) => string | undefined;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Compiles a collector's `required_log_information` into one validator. Every step is linear in the
 * line's length: a size check, strict UTF-8 decoding, a depth scan, JSON.parse, then per field a
 * strptime pass, an address check, an RE2 match (no backtracking) or a set lookup.
 */
export function compileLineValidator(
  fields: readonly LogField[],
  limits: LineLimits,
  optional: readonly LogField[] = [],
): LineValidator {
  const tsFormat = timestampFormats(fields);
  const parseTs = compileTimestamp(tsFormat);
  // `ts` is parsed once: its check keeps the time the verdict returns.
  let tsMicros: number | undefined;
  const checks = fields.map((field) => {
    if (field.name !== 'ts') return [field.name, fieldCheck(field)] as const;
    const check: FieldCheck = (value) => {
      tsMicros = parseTs(value);
      return tsMicros === undefined ? `${quote(value)} does not match ${formatList(tsFormat)}` : undefined;
    };
    return [field.name, check] as const;
  });
  // Checked only when present: a line without them is as valid as one with them.
  const optionalChecks = optional.map((field) => [field.name, fieldCheck(field)] as const);
  return (raw) => {
    if (raw === null || raw.length === 0) return fail('empty line');
    if (raw.length > limits.maxLineBytes) {
      return fail(`line of ${raw.length} bytes exceeds max_line_bytes (${limits.maxLineBytes})`);
    }
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return fail('not valid UTF-8');
    }
    if (!withinDepth(text, limits.maxDepth)) return fail(`JSON nested deeper than ${limits.maxDepth} levels`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return fail(`not JSON (${clip(error instanceof Error ? error.message : String(error))})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return fail('not a JSON object');
    const object = parsed as Record<string, unknown>;
    for (const [name, check] of checks) {
      if (!Object.hasOwn(object, name)) return fail(`missing field "${name}"`);
      const value = object[name];
      if (typeof value !== 'string')
        return fail(`field "${name}": expected a string, got ${typeName(value)}`);
      const problem = check(value);
      if (problem !== undefined) return fail(`field "${name}": ${problem}`);
    }
    for (const [name, check] of optionalChecks) {
      if (!Object.hasOwn(object, name)) continue;
      const value = object[name];
      if (typeof value !== 'string')
        return fail(`field "${name}": expected a string, got ${typeName(value)}`);
      const problem = check(value);
      if (problem !== undefined) return fail(`field "${name}": ${problem}`);
    }
    // Both checked above: ts by its format (which set tsMicros), src_ip as an address.
    return { ok: true, fields: object, tsMicros: tsMicros!, srcIp: object.src_ip as string };
  };
}

function fieldCheck(field: LogField): FieldCheck {
  switch (field.type) {
    case 'Timestamp': {
      const formats = field.formats ?? [field.format];
      const parse = compileTimestamp(formats);
      return (value) =>
        parse(value) === undefined ? `${quote(value)} does not match ${formatList(formats)}` : undefined;
    }
    case 'IpAddress':
      return (value) => (isIP(value) === 0 ? `${quote(value)} is not an IPv4 or IPv6 address` : undefined);
    case 'RegEx': {
      const pattern = RE2JS.compile(`^(?:${field.pattern})`);
      const maxLength = field.maxLength;
      return remembered((value) => {
        if (maxLength !== undefined && value.length > maxLength) {
          return `${value.length} characters, more than ${maxLength}`;
        }
        // Anchored at the start like Python's re.match; the pattern's own `$` anchors the end.
        return pattern.matcher(value).lookingAt()
          ? undefined
          : `${quote(value)} does not match ${field.pattern}`;
      });
    }
    case 'ListItem': {
      const allowed = new Set(field.allowed);
      return (value) =>
        allowed.has(value) ? undefined : `${quote(value)} is not one of ${JSON.stringify(field.allowed)}`;
    }
  }
}

/** Verdicts a RegEx field keeps per generation (two generations: the values seen lately). */
export const REGEX_VERDICTS_KEPT = 8_192;
/** Longer values are matched every time: the kept values then take at most a few MB. */
const LONGEST_KEPT_VALUE = 256;
/** A kept verdict of "matches" (a problem is never an empty text). */
const MATCHES = '';

/**
 * `check` with a memory of the verdicts of values seen lately. RE2's matcher runs in JavaScript
 * here, while a network's names repeat (nine lines in ten of the bench's traffic ask a name asked
 * before) and answer sizes repeat more: with the verdicts kept, validating the bench's lines took
 * 4.4-5.4 µs a line instead of 6.3-6.9. Two generations: a full young one becomes the old one,
 * whose values move back to the young one when seen again, so the names asked often stay while the
 * rare ones age out. A verdict depends on the value alone, so a kept one is what a match would
 * give; a hostile run of new values only makes every line match as before.
 */
function remembered(check: FieldCheck): FieldCheck {
  let young = new Map<string, string>();
  let old = new Map<string, string>();
  const keep = (value: string, verdict: string) => {
    young.set(value, verdict);
    if (young.size < REGEX_VERDICTS_KEPT) return;
    old = young;
    young = new Map();
  };
  return (value) => {
    if (value.length > LONGEST_KEPT_VALUE) return check(value);
    let kept = young.get(value);
    if (kept === undefined) {
      kept = old.get(value);
      if (kept === undefined) {
        kept = check(value) ?? MATCHES;
      }
      keep(value, kept);
    }
    return kept === MATCHES ? undefined : kept;
  };
}

function timestampFormats(fields: readonly LogField[]): readonly string[] {
  const ts = fields.find((field) => field.name === 'ts');
  if (ts?.type !== 'Timestamp') throw new Error('required_log_information without a Timestamp "ts" field');
  return ts.formats ?? [ts.format];
}

/** The formats tried in order; the first that parses the value gives its time. */
function compileTimestamp(formats: readonly string[]): (value: string) => number | undefined {
  const parsers = formats.map(compileStrptime);
  const [only] = parsers;
  if (parsers.length === 1 && only) return only;
  return (value) => {
    for (const parse of parsers) {
      const micros = parse(value);
      if (micros !== undefined) return micros;
    }
    return undefined;
  };
}

function formatList(formats: readonly string[]): string {
  return formats.length === 1
    ? `the format "${formats[0] ?? ''}"`
    : `any of the formats ${formats.map((f) => `"${f}"`).join(', ')}`;
}

/**
 * True when `text` cannot nest arrays and objects deeper than `max`: it has at most `max` brackets
 * that open one, in strings or not. Native searches; the common line has one brace and no bracket.
 */
export function withinDepth(text: string, max: number): boolean {
  let opening = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i >= 0; i = text.indexOf(bracket, i + 1))
      if (++opening > max) return jsonDepth(text) <= max;
  }
  return true;
}

/** Deepest nesting of arrays and objects, counted without parsing (strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 92)
        i += 1; // backslash: skip the escaped character
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (code === 125 || code === 93) depth -= 1;
  }
  return deepest;
}

function fail(reason: string): LineVerdict {
  return { ok: false, reason };
}

function quote(value: string): string {
  return JSON.stringify(clip(value));
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
