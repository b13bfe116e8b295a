import { z } from 'zod';
import type { ConfigIssue } from './errors.ts';
import { formatPath, makeIssue, renderActual } from './errors.ts';
import type { ProblemParams } from './refinements.ts';

const TYPE_NAMES: Readonly<Record<string, string>> = {
  int: 'integer',
  object: 'mapping',
  record: 'mapping',
  array: 'list',
  tuple: 'list',
};

/**
 * Parses `input` with `schema` and turns every zod issue into a {@link ConfigIssue}. Zod's
 * messages are replaced by "expected" phrases (schemas that pass their own `error` already
 * have one) so that each issue prints as `expected X, got Y`.
 */
export function parseWithSchema<S extends z.ZodType>(
  schema: S,
  input: unknown,
): { ok: true; data: z.output<S> } | { ok: false; issues: ConfigIssue[] } {
  const allowedKeys = new Map<string, readonly string[]>();
  const result = schema.safeParse(input, {
    reportInput: true,
    error: (issue) => expectedPhrase(issue, allowedKeys),
  });
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, issues: result.error.issues.flatMap((issue) => toConfigIssues(issue, allowedKeys)) };
}

function expectedPhrase(
  issue: z.core.$ZodRawIssue,
  allowedKeys: Map<string, readonly string[]>,
): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_NAMES[issue.expected] ?? issue.expected;
    case 'too_small':
      return bound(issue.origin, issue.inclusive ? '>=' : '>', Number(issue.minimum), 'at least');
    case 'too_big':
      return bound(issue.origin, issue.inclusive ? '<=' : '<', Number(issue.maximum), 'at most');
    case 'invalid_value':
      return issue.values.length === 1
        ? JSON.stringify(issue.values[0])
        : `one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' && issue.pattern ? `string matching ${issue.pattern}` : issue.format;
    case 'unrecognized_keys': {
      const allowed = knownKeys(issue.inst);
      allowedKeys.set(formatPath(issue.path ?? []), allowed);
      return `one of the allowed keys [${allowed.join(', ')}]`;
    }
    case 'invalid_key':
      return issue.issues[0]?.message ?? 'valid key';
    case 'invalid_union':
      return 'one of the accepted forms';
    default:
      return undefined;
  }
}

function bound(origin: string, operator: string, limit: number, words: string): string {
  if (origin === 'array') return `list with ${words} ${limit} item${limit === 1 ? '' : 's'}`;
  if (origin === 'string')
    return limit === 1 && words === 'at least'
      ? 'non-empty string'
      : `string of ${words} ${limit} characters`;
  return `number ${operator} ${limit}`;
}

function knownKeys(schema: unknown): readonly string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodRecord) {
    const keyType: unknown = schema.keyType;
    if (keyType instanceof z.ZodEnum) return keyType.options.map(String);
  }
  return [];
}

function toConfigIssues(issue: z.core.$ZodIssue, allowedKeys: Map<string, readonly string[]>): ConfigIssue[] {
  const path = formatPath(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = allowedKeys.get(path) ?? [];
      const container = issue.input ?? {};
      return issue.keys.map((key) => {
        const actual = renderActual(container[key]);
        const suggestion = closest(key, allowed);
        const hint = suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
        return {
          path: formatPath([...issue.path, key]),
          expected: issue.message,
          actual,
          message: `unknown key${hint}: expected ${issue.message}, got ${actual}`,
        };
      });
    }
    case 'invalid_key':
      return [makeIssue({ path, expected: issue.message, value: issue.input, note: 'key' })];
    case 'custom': {
      const params = issue.params as ProblemParams | undefined;
      const actual = params?.actual ?? renderActual(issue.input);
      const note = params?.note === undefined ? '' : ` (${params.note})`;
      return [
        { path, expected: issue.message, actual, message: `expected ${issue.message}, got ${actual}${note}` },
      ];
    }
    default:
      return [makeIssue({ path, expected: issue.message, value: issue.input })];
  }
}

/** The allowed key a typo most likely meant (small edit distance), if any. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
