/**
 * Rewrites the lookaround of Python RegEx fields into RE2 syntax where an equivalent exists. RE2 (the
 * collector's linear-time engine) has no lookaround, and the patterns HAMSTRING's Python configs ship
 * use it in two ways only, both of which have exact RE2 forms:
 *
 * - a leading length bound, `^(?=.{1,253}$)rest`: the value is 1 to 253 characters. It becomes the
 *   RegEx field's fourth element (a maximum length); the lower bound must be 0, or 1 when `rest`
 *   cannot match an empty value. Python's `.` matches no line break, so the rewrite is only made when
 *   `rest` cannot match one either.
 * - a class run whose first or last character may not be one character, `(?!-)[A-Za-z0-9-]{1,63}(?<!-)`:
 *   with C' the class without `-`, the run is `C'` alone or `C'`, up to 61 of the class, `C'`, written
 *   `[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`.
 *
 * Anything else (a lookbehind that is not a run's end, a lookahead that is not a run's start or the
 * leading bound) has no rewrite here, and the pattern is reported as it is.
 */

/** What became of a pattern. */
export type LookaroundRewrite =
  | { readonly ok: true; readonly pattern: string; readonly maxLength?: number; readonly changes: string[] }
  | { readonly ok: false; readonly reason: string };

const LOOKAROUND = /\(\?<?[=!]/;
const LEADING_BOUND = /^(\^?)\(\?=\.\{(\d+)(?:(,)(\d*))?\}\$\)/;
// A class with a quantifier of at least one, with a single-character negative lookahead before it
// and/or a single-character negative lookbehind after it.
const GUARDED_RUN =
  /(\(\?!(\\.|[^\\()[\]])\))?(\[(?:\\.|[^\]\\])+\])(?:\{(\d+)(?:(,)(\d*))?\}|(\+))(\(\?<!(\\.|[^\\()[\]])\))?/g;
// Constructs that can match a line break (RE2's `.` cannot, as Python's).
const LINE_BREAK_CAPABLE = /\[\^|\\[sDWnPpxu]|\(\?[a-z]*s/;

/** True when `pattern` uses lookahead or lookbehind. */
export function hasLookaround(pattern: string): boolean {
  return LOOKAROUND.test(pattern);
}

/**
 * The RE2 form of `pattern`, or why there is none. `matchesEmpty` tells whether a pattern (without
 * lookaround) matches the empty value; the caller has the engine.
 */
export function rewriteLookaround(
  pattern: string,
  matchesEmpty: (re2Pattern: string) => boolean,
): LookaroundRewrite {
  const changes: string[] = [];
  let rest = pattern;
  let maxLength: number | undefined;
  const bound = LEADING_BOUND.exec(rest);
  if (bound) {
    const [whole, caret = '', min = '0', comma, max] = bound;
    if (comma === undefined || max === undefined || max === '')
      return { ok: false, reason: `${whole} sets no maximum length` };
    rest = caret + rest.slice(whole.length);
    maxLength = Number(max);
    if (LINE_BREAK_CAPABLE.test(rest))
      return {
        ok: false,
        reason: `${whole}: the rest of the pattern may match a line break, which "." does not`,
      };
    const runs = rewriteRuns(rest);
    if (!runs.ok) return runs;
    if (Number(min) > 1 || (Number(min) === 1 && !hasLookaround(runs.pattern) && matchesEmpty(runs.pattern)))
      return { ok: false, reason: `${whole}: a minimum length of ${min} has no RE2 form here` };
    changes.push(`${whole} became a maximum length of ${max}`);
    changes.push(...runs.changes);
    rest = runs.pattern;
  } else {
    const runs = rewriteRuns(rest);
    if (!runs.ok) return runs;
    changes.push(...runs.changes);
    rest = runs.pattern;
  }
  const left = LOOKAROUND.exec(rest);
  if (left) return { ok: false, reason: `no RE2 equivalent for the lookaround at ${rest.slice(left.index)}` };
  return maxLength === undefined
    ? { ok: true, pattern: rest, changes }
    : { ok: true, pattern: rest, maxLength, changes };
}

function rewriteRuns(pattern: string): LookaroundRewrite {
  const changes: string[] = [];
  let failure: string | undefined;
  const out = pattern.replace(
    GUARDED_RUN,
    (
      whole: string,
      ahead: string | undefined,
      aheadChar: string | undefined,
      cls: string,
      exact: string | undefined,
      comma: string | undefined,
      upper: string | undefined,
      plus: string | undefined,
      behind: string | undefined,
      behindChar: string | undefined,
    ): string => {
      if (ahead === undefined && behind === undefined) return whole;
      const min = plus !== undefined ? 1 : Number(exact);
      const max =
        plus !== undefined
          ? Infinity
          : comma === undefined
            ? min
            : upper === '' || upper === undefined
              ? Infinity
              : Number(upper);
      if (min < 1) {
        failure ??= `${whole}: a run that may be empty`;
        return whole;
      }
      const notFirst = aheadChar === undefined ? [] : [literal(aheadChar)];
      const notLast = behindChar === undefined ? [] : [literal(behindChar)];
      const first = withoutChars(cls, new Set(notFirst));
      const last = withoutChars(cls, new Set(notLast));
      const only = withoutChars(cls, new Set([...notFirst, ...notLast]));
      if (first === undefined || last === undefined || only === undefined) {
        failure ??= `${whole}: the excluded character is part of a range of ${cls}, or nothing is left`;
        return whole;
      }
      const rewritten = guardedRun({ cls, first, last, only }, min, max);
      changes.push(`${whole} became ${rewritten}`);
      return rewritten;
    },
  );
  if (failure !== undefined) return { ok: false, reason: failure };
  return { ok: true, pattern: out, changes };
}

// A run of min..max characters of `cls` whose first is in `first` and last in `last` (`only` when it
// is both).
function guardedRun(
  c: { cls: string; first: string; last: string; only: string },
  min: number,
  max: number,
): string {
  const run = (lo: number, hi: number) => {
    if (hi === Infinity) return lo === 0 ? `${c.cls}*` : `${c.cls}{${lo},}`;
    return lo === hi ? `${c.cls}{${lo}}` : `${c.cls}{${lo},${hi}}`;
  };
  if (c.first === c.cls) return `${run(min - 1, max - 1)}${c.last}`;
  if (c.last === c.cls) return `${c.first}${run(min - 1, max - 1)}`;
  if (max === 1) return c.only;
  if (min === 1 && c.first === c.only && c.last === c.only)
    return `${c.first}(?:${run(0, max - 2)}${c.last})?`;
  const longer = `${c.first}${run(Math.max(0, min - 2), max - 2)}${c.last}`;
  return min === 1 ? `(?:${c.only}|${longer})` : longer;
}

function literal(token: string): string {
  return token.startsWith('\\') ? token.slice(1) : token;
}

// The class without the given literal characters; undefined when one of them is inside a range.
function withoutChars(cls: string, excluded: ReadonlySet<string>): string | undefined {
  const body = cls.slice(1, -1);
  if (body.startsWith('^')) return undefined;
  const items: string[] = [];
  for (let i = 0; i < body.length;) {
    const single = body[i] === '\\' ? body.slice(i, i + 2) : (body[i] ?? '');
    const afterSingle = i + single.length;
    if (body[afterSingle] === '-' && afterSingle + 1 < body.length) {
      const endToken =
        body[afterSingle + 1] === '\\'
          ? body.slice(afterSingle + 1, afterSingle + 3)
          : (body[afterSingle + 1] ?? '');
      const from = literal(single);
      const to = literal(endToken);
      for (const c of excluded) if (c >= from && c <= to) return undefined;
      items.push(`${single}-${endToken}`);
      i = afterSingle + 1 + endToken.length;
    } else {
      if (!excluded.has(literal(single))) items.push(single);
      i = afterSingle;
    }
  }
  if (items.length === 0) return undefined;
  return `[${items.join('')}]`;
}
