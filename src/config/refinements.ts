import type { z } from 'zod';
import { renderActual } from './errors.ts';

/** What a custom refinement attaches to its zod issue; read back by `parseWithSchema`. */
export interface ProblemParams {
  readonly actual: string;
  readonly note?: string;
}

/**
 * Reports a rule violation from inside a refinement. The issue message is the "expected" phrase;
 * the found value is rendered here because zod would replace an `undefined` input by the
 * refined object, and "got nothing" must survive.
 */
export function addProblem(
  ctx: z.RefinementCtx<unknown>,
  path: readonly PropertyKey[],
  expected: string,
  value: unknown,
  note?: string,
): void {
  const params: ProblemParams =
    note === undefined ? { actual: renderActual(value) } : { actual: renderActual(value), note };
  ctx.addIssue({ code: 'custom', path: [...path], message: expected, input: value, params });
}

/** Reads a possibly invalid value as a plain object (refinements that run despite other errors). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * `when` for a cross-field refinement: run it as soon as the named fields are valid positive
 * integers, even if other fields of the same object are broken, so that all problems are listed.
 */
export function whenPositiveIntegers(...keys: readonly string[]): (payload: { value: unknown }) => boolean {
  return (payload) => {
    const object = asRecord(payload.value);
    return keys.every((key) => {
      const value = object?.[key];
      return typeof value === 'number' && Number.isInteger(value) && value > 0;
    });
  };
}
