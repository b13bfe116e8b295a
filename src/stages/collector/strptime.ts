/**
 * Python's strptime for the directives the config accepts (`STRPTIME_DIRECTIVES`), compiled once per
 * format. Parsing is a single left-to-right pass over the value (no backtracking), so its cost is
 * linear in the value's length. A value without `%z`/`%Z` is taken as UTC (Python gives a naive
 * datetime; every HAMSTRING sensor writes UTC).
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

type Token = { literal: string } | { directive: string };

interface Fields {
  year: number;
  month: number;
  day: number;
  yearDay?: number;
  hour: number;
  hour12?: number;
  pm?: boolean;
  minute: number;
  second: number;
  micros: number;
  offsetMinutes: number;
}

/** Parses values of one format to microseconds since the epoch; `undefined` when one does not fit. */
export type TimestampParser = (value: string) => number | undefined;

export function compileStrptime(format: string): TimestampParser {
  const tokens = tokenize(format);
  return (value) => parse(tokens, value);
}

function tokenize(format: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < format.length; i += 1) {
    const char = format[i]!;
    if (char === '%' && i + 1 < format.length) {
      const directive = format[i + 1]!;
      tokens.push(directive === '%' ? { literal: '%' } : { directive });
      i += 1;
    } else tokens.push({ literal: char });
  }
  return tokens;
}

function parse(tokens: readonly Token[], value: string): number | undefined {
  const fields: Fields = {
    year: 1900,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
    micros: 0,
    offsetMinutes: 0,
  };
  let at = 0;
  for (const token of tokens) {
    if ('literal' in token) {
      // Python: whitespace in the format matches any run of whitespace (also none).
      if (/\s/.test(token.literal)) {
        while (at < value.length && /\s/.test(value[at]!)) at += 1;
      } else if (value[at] === token.literal) at += 1;
      else return undefined;
      continue;
    }
    const next = readDirective(token.directive, value, at, fields);
    if (next === undefined) return undefined;
    at = next;
  }
  if (at !== value.length) return undefined;
  return toMicros(fields);
}

function digits(value: string, at: number, min: number, max: number): [number, number] | undefined {
  let end = at;
  while (end < value.length && end - at < max && value.charCodeAt(end) >= 48 && value.charCodeAt(end) <= 57) {
    end += 1;
  }
  if (end - at < min) return undefined;
  return [Number(value.slice(at, end)), end];
}

function ranged(
  value: string,
  at: number,
  min: number,
  max: number,
  low: number,
  high: number,
  set: (n: number) => void,
): number | undefined {
  const read = digits(value, at, min, max);
  if (!read || read[0] < low || read[0] > high) return undefined;
  set(read[0]);
  return read[1];
}

function name(
  value: string,
  at: number,
  lists: readonly (readonly string[])[],
): [number, number] | undefined {
  const rest = value.slice(at, at + 9).toLowerCase();
  // Full names first, so "May" as %B and "March" as %b both read to the right end.
  for (const list of [...lists].sort((a, b) => (b[0]?.length ?? 0) - (a[0]?.length ?? 0))) {
    const index = list.findIndex((entry) => rest.startsWith(entry));
    if (index >= 0) return [index, at + list[index]!.length];
  }
  return undefined;
}

function readDirective(directive: string, value: string, at: number, f: Fields): number | undefined {
  switch (directive) {
    case 'Y':
      return ranged(value, at, 4, 4, 1, 9999, (n) => (f.year = n));
    case 'y':
      // Python: 69-99 -> 1969-1999, 0-68 -> 2000-2068.
      return ranged(value, at, 2, 2, 0, 99, (n) => (f.year = n < 69 ? 2000 + n : 1900 + n));
    case 'm':
      return ranged(value, at, 1, 2, 1, 12, (n) => (f.month = n));
    case 'd':
      return ranged(value, at, 1, 2, 1, 31, (n) => (f.day = n));
    case 'j':
      return ranged(value, at, 1, 3, 1, 366, (n) => (f.yearDay = n));
    case 'H':
      return ranged(value, at, 1, 2, 0, 23, (n) => (f.hour = n));
    case 'I':
      return ranged(value, at, 1, 2, 1, 12, (n) => (f.hour12 = n));
    case 'M':
      return ranged(value, at, 1, 2, 0, 59, (n) => (f.minute = n));
    case 'S':
      return ranged(value, at, 1, 2, 0, 59, (n) => (f.second = n));
    case 'f': {
      const read = digits(value, at, 1, 6);
      if (!read) return undefined;
      f.micros = Number(value.slice(at, read[1]).padEnd(6, '0'));
      return read[1];
    }
    case 'p': {
      const marker = value.slice(at, at + 2).toUpperCase();
      if (marker !== 'AM' && marker !== 'PM') return undefined;
      f.pm = marker === 'PM';
      return at + 2;
    }
    case 'b':
    case 'B': {
      const read = name(value, at, [MONTH_NAMES, MONTHS]);
      if (!read) return undefined;
      f.month = read[0] + 1;
      return read[1];
    }
    case 'a':
    case 'A':
      // The weekday is not checked against the date, as in Python.
      return name(value, at, [DAY_NAMES, DAYS])?.[1];
    case 'z':
      return readOffset(value, at, f);
    case 'Z': {
      const zone = /^(UTC|GMT|Z)/i.exec(value.slice(at, at + 3));
      return zone ? at + zone[0].length : undefined;
    }
    default:
      return undefined;
  }
}

// Python 3.7+: Z, +HHMM, +HH:MM, optionally with seconds (+HHMMSS, +HH:MM:SS).
function readOffset(value: string, at: number, f: Fields): number | undefined {
  if (value[at] === 'Z') {
    f.offsetMinutes = 0;
    return at + 1;
  }
  const match = /^([+-])(\d\d)(:?)(\d\d)(?:\3(\d\d))?/.exec(value.slice(at, at + 9));
  if (!match) return undefined;
  const [, sign, hours, , minutes, seconds] = match;
  if (Number(minutes) > 59 || Number(seconds ?? 0) > 59 || Number(hours) > 23) return undefined;
  // Whole minutes only: a seconds part is accepted but rounds toward zero, as sensors never send it.
  f.offsetMinutes = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  return at + match[0].length;
}

function toMicros(f: Fields): number | undefined {
  let hour = f.hour;
  if (f.hour12 !== undefined) hour = (f.hour12 % 12) + (f.pm ? 12 : 0);
  let month = f.month;
  let day = f.day;
  if (f.yearDay !== undefined) {
    const date = new Date(Date.UTC(f.year, 0, f.yearDay));
    if (date.getUTCFullYear() !== f.year) return undefined;
    month = date.getUTCMonth() + 1;
    day = date.getUTCDate();
  }
  const date = new Date(0);
  date.setUTCFullYear(f.year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined; // e.g. Feb 30
  date.setUTCHours(hour, f.minute, f.second, 0);
  return (date.getTime() - f.offsetMinutes * 60_000) * 1000 + f.micros;
}
