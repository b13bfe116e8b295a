/**
 * How the accounting tells its input lines apart after every stage: each carries the mark
 * `"verify_line":<n>`. A valid JSON line gets it as an extra field, which the collector copies into
 * the LogLine (unknown input fields pass through), so it travels on in every batch and in alert
 * warnings. An invalid line carries the same text somewhere in its first bytes, where the
 * `failed_loglines` row's `message_text` (the line's first 4096 bytes) still holds it.
 */

export const LINE_FIELD = 'verify_line';

const MARK = /"verify_line":(\d+)(?!\d)/;
/** A mark further in than this is not looked for: `message_text` keeps the line's first 4096 bytes. */
const SEARCHED_BYTES = 4096;

/** The mark of line `id`, to put into the first bytes of an invalid line. */
export function lineMark(id: number): string {
  return `"${LINE_FIELD}":${id}`;
}

/**
 * The JSON line `json` (an object) with its mark as the field `verify_line`.
 * @throws {TypeError} when `json` is not a JSON object.
 */
export function markJsonLine(json: string, id: number): string {
  const parsed: unknown = JSON.parse(json);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new TypeError('markJsonLine: not a JSON object');
  // First, so that the mark lies within the bytes a `failed_loglines` row keeps of any line.
  return JSON.stringify({ [LINE_FIELD]: id, ...parsed });
}

/**
 * The line id marked in a line's bytes, or undefined. Read as latin1: a mark is ASCII, and a hostile
 * line's invalid UTF-8 around it must not hide it.
 */
export function lineIdOf(value: Buffer | string): number | undefined {
  const text =
    typeof value === 'string'
      ? value.slice(0, SEARCHED_BYTES)
      : value.subarray(0, SEARCHED_BYTES).toString('latin1');
  const match = MARK.exec(text);
  return match ? Number(match[1]) : undefined;
}
