import type { RecordPosition } from '../../runtime/index.ts';
import type { LinePosition } from '../line-frames.ts';
import { timestampMicros, type LogLine } from '../messages.ts';

/**
 * A line as the collector keeps it until its batch leaves and, as context, one batch longer: its JSON
 * text, made once, plus what batching needs without parsing it again (id and time). A line's text is
 * spliced into every batch that carries it; an object would be serialised again for the store, for its
 * cost, for its batch and for the next batch's context.
 */
export interface ContextLine {
  /** `JSON.stringify` of the LogLine. */
  readonly json: string;
  readonly id: string;
  /** `ts` in microseconds since the epoch. */
  readonly micros: number;
}

/** A line of an open batch: its text and the position it was read from. */
export interface StoredLine extends ContextLine {
  readonly source: LinePosition;
}

/** The store entry holding the lines one call added to a subnet's open batch. */
export interface LinesEntry {
  readonly v: 2;
  readonly lines: readonly StoredLine[];
}

/** The store entry holding the lines of a subnet's previous batch, and their cost. */
export interface ContextEntry {
  readonly v: 2;
  readonly lines: readonly ContextLine[];
  readonly bytes: number;
}

/**
 * What a line adds to an encoded batch, whether new or context: its JSON and a comma in `data`, and
 * its quoted id and a comma in `context_logline_ids`. Counting the id for new lines too is what lets
 * them be carried as context later without measuring them again.
 */
export function textCost(line: Pick<ContextLine, 'json' | 'id'>): number {
  return Buffer.byteLength(line.json) + Buffer.byteLength(JSON.stringify(line.id)) + 2;
}

/** {@link textCost} of a LogLine object. */
export function lineCost(line: LogLine): number {
  return textCost({ json: JSON.stringify(line), id: line.logline_id });
}

export function sumCost(lines: readonly Pick<ContextLine, 'json' | 'id'>[]): number {
  let total = 0;
  for (const line of lines) total += textCost(line);
  return total;
}

function fromLogLine(line: LogLine): ContextLine {
  return { json: JSON.stringify(line), id: line.logline_id, micros: timestampMicros(line.ts) };
}

// Earlier versions of the collector stored LogLine objects: one `{ line, source }` per entry, then an
// array of them per entry; context as an array of lines, then as `{ lines, bytes }`. A store they
// wrote is read on: such entries are converted when read and written back in the new form only as
// the batches they belong to move on.

/** The lines of a store entry written by this or an earlier version. */
export function linesOfEntry(value: unknown): readonly StoredLine[] {
  if (isTextEntry(value)) return (value as LinesEntry).lines;
  const old = (Array.isArray(value) ? value : [value]) as { line: LogLine; source: RecordPosition }[];
  return old.map(({ line, source }) => ({ ...fromLogLine(line), source }));
}

/** The context entry written by this or an earlier version (none: no context). */
export function contextOfEntry(value: unknown): { lines: readonly ContextLine[]; bytes: number } {
  if (value === undefined) return { lines: [], bytes: 0 };
  if (isTextEntry(value)) return value as ContextEntry;
  const old = (Array.isArray(value) ? value : (value as { lines: LogLine[] }).lines) as LogLine[];
  const lines = old.map(fromLogLine);
  return { lines, bytes: sumCost(lines) };
}

/** True for an entry of line texts as this version writes it (a {@link LinesEntry} or {@link ContextEntry}). */
export function isTextEntry(value: unknown): value is LinesEntry | ContextEntry {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { v?: unknown }).v === 2 &&
    Array.isArray((value as { lines?: unknown }).lines)
  );
}
