import { RE2JS } from 're2js';
import { z } from 'zod';
import { rewriteLookaround } from './lookaround.ts';
import { addProblem, asArray, asRecord } from './refinements.ts';
import { nonEmptyString } from './value-schemas.ts';

/** The field types of a collector's `required_log_information` entry `[name, Type, arg3?, arg4?]`. */
export const LOG_FIELD_TYPES = ['Timestamp', 'IpAddress', 'RegEx', 'ListItem'] as const;
export type LogFieldType = (typeof LOG_FIELD_TYPES)[number];

/** Fields every collector needs, with the type they must have. */
export const REQUIRED_LOG_FIELDS: Readonly<Record<string, LogFieldType>> = {
  ts: 'Timestamp',
  src_ip: 'IpAddress',
};

/** Names the pipeline adds to every log line itself. */
export const RESERVED_LOG_FIELD_NAMES: readonly string[] = ['logline_id', 'batch_id', 'subnet_id'];

/**
 * The strptime directives the collector implements (Python's meaning; `%Z` accepts UTC, GMT and Z).
 * Python's week-based and locale directives (%U %W %G %V %u %w %c %x %X) are refused at config time.
 */
export const STRPTIME_DIRECTIVES = 'YmdHMSfzZyjbBIpaA%';

/**
 * The shipped domain_name pattern without lookaround: RE2 (linear-time matching, so a hostile value
 * cannot make the collector backtrack) has none. Its 253-character bound is the RegEx field's fourth
 * element instead. Labels are 1-63 letters, digits and inner hyphens, which punycode labels
 * (`xn--mnchen-3ya`) already are; the top-level label is 2-63 letters or an IDN one (`xn--p1ai`:
 * `xn--` and punycode, at most 63, not ending in a hyphen), which Python's letters-only TLD refused.
 */
export const DOMAIN_NAME_PATTERN =
  '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+([A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$';

/** One validated `required_log_information` entry, as the collector consumes it. */
export type LogField =
  | {
      readonly name: string;
      readonly type: 'Timestamp';
      /** The first of `formats`. */
      readonly format: string;
      /** strptime formats tried in order (the first that parses a value gives its time); absent: `[format]`. */
      readonly formats?: readonly string[];
    }
  | { readonly name: string; readonly type: 'IpAddress' }
  | {
      readonly name: string;
      readonly type: 'RegEx';
      /** RE2 syntax; a value must match from its first character (Python's `re.match`). */
      readonly pattern: string;
      /** Longest value accepted, in characters (the bound lookahead expressed in Python's pattern). */
      readonly maxLength?: number;
    }
  | {
      readonly name: string;
      readonly type: 'ListItem';
      readonly allowed: readonly string[];
      /** Values the prefilter keeps (check_dga_relevance); absent means every allowed value. */
      readonly relevant?: readonly string[];
    };

const KNOWN_DIRECTIVES = new Set(STRPTIME_DIRECTIVES);

type Entry = [string, LogFieldType, ...unknown[]];

const entrySchema = z
  .tuple([nonEmptyString(), z.enum(LOG_FIELD_TYPES)], z.unknown())
  .superRefine((entry, ctx) => checkArguments(entry, ctx));

/**
 * `required_log_information`: validates each entry against its type's argument rules and the
 * list as a whole (required and reserved names, uniqueness), then turns the tuples into
 * {@link LogField} objects.
 */
export const requiredLogInformationSchema = z
  .array(entrySchema, { error: 'list of [name, Type, ...] fields' })
  .superRefine((entries, ctx) => checkNames(entries, ctx), { when: () => true })
  .transform((entries) => entries.map(toLogField));

/**
 * `optional_log_information` (not in the Python config): entries in the same form, checked only when
 * a line has the field, so one collector takes lines that lack it (HAMSTRING v2.0.0's lines carry no
 * `response_ip`). `ts` and `src_ip` cannot be optional; a ListItem here has no relevant list, because
 * the prefilter could not tell a line without the field from an irrelevant one.
 */
export const optionalLogInformationSchema = z
  .array(entrySchema, { error: 'list of [name, Type, ...] fields' })
  .superRefine((entries, ctx) => checkOptionalNames(entries, ctx), { when: () => true })
  .transform((entries) => entries.map(toLogField));

/**
 * A collector's two lists together: a name is either required or optional. Call from the collector's
 * refinement with the lists as found (possibly invalid).
 */
export function checkOptionalAgainstRequired(
  ctx: z.RefinementCtx<unknown>,
  required: unknown,
  optional: unknown,
): void {
  const names = new Set(asArray(required).map(entryName));
  asArray(optional).forEach((entry, index) => {
    const name = entryName(entry);
    // ts and src_ip are refused by the list's own check.
    if (typeof name === 'string' && names.has(name) && !(name in REQUIRED_LOG_FIELDS))
      addProblem(
        ctx,
        ['optional_log_information', index, 0],
        'name not also in required_log_information',
        name,
      );
  });
}

// An entry as found ([name, Type, ...]) or already transformed ({name, type, ...}).
function entryName(entry: unknown): unknown {
  return Array.isArray(entry) ? (entry[0] as unknown) : asRecord(entry)?.name;
}

function checkOptionalNames(entries: unknown, ctx: z.RefinementCtx<unknown>): void {
  const seen = new Set<string>();
  asArray(entries).forEach((entry, index) => {
    if (!Array.isArray(entry)) return;
    const [name, type, , relevant] = entry as unknown[];
    if (typeof name !== 'string') return;
    if (name in REQUIRED_LOG_FIELDS || RESERVED_LOG_FIELD_NAMES.includes(name))
      addProblem(
        ctx,
        [index, 0],
        `field name other than ${[...Object.keys(REQUIRED_LOG_FIELDS), ...RESERVED_LOG_FIELD_NAMES].join(', ')} (required or reserved)`,
        name,
      );
    if (seen.has(name)) addProblem(ctx, [index, 0], 'unique field name', name);
    seen.add(name);
    if (type === 'ListItem' && relevant !== undefined)
      addProblem(ctx, [index, 3], 'nothing (an optional field has no relevant list)', relevant);
  });
}

function checkArguments(entry: Entry, ctx: z.RefinementCtx<unknown>): void {
  const [, type, ...args] = entry;
  const extraFrom = (position: number, expected: string) => {
    if (args.length > position) addProblem(ctx, [position + 2], expected, args[position]);
  };
  switch (type) {
    case 'Timestamp': {
      // One format (Python) or a list of formats (the first that parses a value wins).
      const formats = Array.isArray(args[0]) ? (args[0] as unknown[]) : [args[0]];
      const listed = Array.isArray(args[0]);
      if (formats.length === 0)
        addProblem(ctx, [2], 'strptime format string or non-empty list of them', args[0]);
      formats.forEach((format, index) => checkFormat(ctx, listed ? [2, index] : [2], format));
      extraFrom(1, 'nothing (Timestamp takes one argument, the format or a list of formats)');
      return;
    }
    case 'IpAddress':
      extraFrom(0, 'nothing (IpAddress takes no argument)');
      return;
    case 'RegEx': {
      const pattern = args[0];
      if (typeof pattern !== 'string' || pattern === '') {
        addProblem(ctx, [2], 'regular expression string', pattern);
      } else {
        checkPattern(ctx, pattern);
      }
      const maxLength = args[1];
      if (
        args.length > 1 &&
        (typeof maxLength !== 'number' || !Number.isInteger(maxLength) || maxLength < 1)
      ) {
        addProblem(ctx, [3], 'positive integer (longest value accepted)', maxLength);
      }
      extraFrom(2, 'nothing (RegEx takes a pattern and an optional maximum length)');
      return;
    }
    case 'ListItem': {
      const allowed = checkStringList(ctx, 2, args[0], 'non-empty list of allowed values');
      if (args.length > 1) {
        const relevant = checkStringList(ctx, 3, args[1], 'list of relevant values');
        if (allowed && relevant) {
          const outside = relevant.filter((value) => !allowed.includes(value));
          if (outside.length > 0) {
            addProblem(
              ctx,
              [3],
              `subset of the allowed values ${JSON.stringify(allowed)}`,
              relevant,
              `not allowed: ${outside.map((value) => JSON.stringify(value)).join(', ')}`,
            );
          }
        }
      }
      extraFrom(2, 'nothing (ListItem takes an allowed list and an optional relevant list)');
      return;
    }
  }
}

function checkFormat(ctx: z.RefinementCtx<unknown>, path: readonly PropertyKey[], format: unknown): void {
  if (typeof format !== 'string' || format.trim() === '') {
    addProblem(ctx, path, 'strptime format string, e.g. "%Y-%m-%dT%H:%M:%S"', format);
    return;
  }
  const unknown = unknownDirectives(format);
  if (unknown.length > 0) {
    addProblem(
      ctx,
      path,
      `strptime format with supported directives (${[...STRPTIME_DIRECTIVES].map((d) => `%${d}`).join(' ')})`,
      format,
      `unsupported: ${unknown.join(' ')}`,
    );
  }
}

function checkStringList(
  ctx: z.RefinementCtx<unknown>,
  position: number,
  value: unknown,
  expected: string,
): string[] | undefined {
  if (!Array.isArray(value) || (position === 2 && value.length === 0)) {
    addProblem(ctx, [position], expected, value);
    return undefined;
  }
  let valid = true;
  value.forEach((item, index) => {
    if (typeof item !== 'string') {
      addProblem(ctx, [position, index], 'string (quote values that YAML reads as numbers)', item);
      valid = false;
    }
  });
  return valid ? (value as string[]) : undefined;
}

function unknownDirectives(format: string): string[] {
  const unknown: string[] = [];
  for (let i = 0; i < format.length; i += 1) {
    if (format[i] !== '%') continue;
    const directive = format[i + 1] ?? '';
    if (!KNOWN_DIRECTIVES.has(directive)) unknown.push(`%${directive}`);
    i += 1;
  }
  return unknown;
}

const LOOKAROUND = /\(\?<?[=!]/;

// RE2 syntax rather than JavaScript's: the collector matches with RE2 (re2js), whose matching time is
// linear in the value, so a pattern that compiles here runs the same there.
function checkPattern(ctx: z.RefinementCtx<unknown>, pattern: string): void {
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (LOOKAROUND.test(pattern)) {
      const rewrite = rewriteLookaround(pattern, () => true);
      addProblem(
        ctx,
        [2],
        'regular expression without lookaround (RE2 syntax, matched in linear time)',
        pattern,
        `${reason}; ${rewrite.ok ? '' : `not rewritten automatically: ${rewrite.reason}; `}` +
          `express a length bound as the fourth element, e.g. [domain_name, RegEx, '${DOMAIN_NAME_PATTERN}', 253]`,
      );
    } else addProblem(ctx, [2], 'regular expression that compiles (RE2 syntax)', pattern, reason);
  }
}

// Runs even when single entries are invalid, so a missing `ts` is reported together with them.
function checkNames(entries: unknown, ctx: z.RefinementCtx<unknown>): void {
  if (!Array.isArray(entries)) return;
  const list = asArray(entries);
  const firstIndex = new Map<string, number>();
  const names: string[] = [];
  list.forEach((entry, index) => {
    const name = Array.isArray(entry) ? (entry[0] as unknown) : undefined;
    if (typeof name !== 'string') return;
    names.push(name);
    if (RESERVED_LOG_FIELD_NAMES.includes(name)) {
      addProblem(
        ctx,
        [index, 0],
        `field name other than the reserved ${RESERVED_LOG_FIELD_NAMES.join(', ')}`,
        name,
      );
    }
    const first = firstIndex.get(name);
    if (first === undefined) firstIndex.set(name, index);
    else addProblem(ctx, [index, 0], `unique field name`, name, `already defined at [${first}]`);
  });
  for (const [name, type] of Object.entries(REQUIRED_LOG_FIELDS)) {
    const index = firstIndex.get(name);
    if (index === undefined) {
      addProblem(ctx, [], `a field named "${name}" (${type})`, names, `"${name}" is required`);
      continue;
    }
    const entry = list[index] as unknown[];
    if (typeof entry[1] === 'string' && entry[1] !== type) {
      addProblem(ctx, [index, 1], `"${type}" for the required field "${name}"`, entry[1]);
    }
  }
}

function toLogField(entry: Entry): LogField {
  const [name, type, first, second] = entry;
  switch (type) {
    case 'Timestamp': {
      if (!Array.isArray(first)) return { name, type, format: first as string };
      const formats = first as string[];
      return { name, type, format: formats[0] as string, formats };
    }
    case 'IpAddress':
      return { name, type };
    case 'RegEx':
      return second === undefined
        ? { name, type, pattern: first as string }
        : { name, type, pattern: first as string, maxLength: second as number };
    case 'ListItem': {
      const relevant = second as string[] | undefined;
      // An empty relevant list means "no restriction", as in the Python LoglineHandler.
      return relevant && relevant.length > 0
        ? { name, type, allowed: first as string[], relevant }
        : { name, type, allowed: first as string[] };
    }
  }
}
