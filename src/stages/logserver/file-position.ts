/**
 * Tailing a file exactly once: which bytes to read next, decided from the file's identity and size
 * and the position stored with the last committed outputs. Pure, so a timer call replayed after an
 * aborted transaction (position rolled back) plans the same read from the same offset.
 */

/** A file as `stat` identifies it: rename keeps it, a new file at the path changes it. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

export interface FileObservation extends FileIdentity {
  readonly size: number;
}

/** What the logserver stores: the file it read last and the offset after its last complete line. */
export interface FilePosition extends FileIdentity {
  readonly offset: number;
}

export type ReadPlan =
  | { readonly kind: 'idle' }
  | {
      readonly kind: 'read';
      /** `current`: the file at the configured path; `rotated`: the file it was renamed to. */
      readonly file: 'current' | 'rotated';
      readonly identity: FileIdentity;
      readonly from: number;
      readonly to: number;
      /** The file will not grow any more: a last line without a newline is complete. */
      readonly final: boolean;
    };

const same = (a: FileIdentity, b: FileIdentity) => a.dev === b.dev && a.ino === b.ino;

/**
 * The next read. A new file at the path (rename rotation) is read from its start, after the rest of
 * the renamed file when it is still found (`rotated`: the stat of `<path>.1`); a file shorter than the
 * stored offset (truncated in place) is read again from its start.
 */
export function planRead(
  current: FileObservation | undefined,
  stored: FilePosition | undefined,
  rotated: FileObservation | undefined,
  maxChunk: number,
): ReadPlan {
  const read = (
    file: 'current' | 'rotated',
    observed: FileObservation,
    from: number,
    final: boolean,
  ): ReadPlan =>
    observed.size > from
      ? { kind: 'read', file, identity: observed, from, to: Math.min(observed.size, from + maxChunk), final }
      : { kind: 'idle' };
  if (stored && current && same(stored, current)) {
    return read('current', current, current.size < stored.offset ? 0 : stored.offset, false);
  }
  if (stored && rotated && same(stored, rotated) && rotated.size > stored.offset) {
    // Until a new file exists the writer may still be appending to the renamed one (Suricata
    // writes to it until its reopen signal): a last line without a newline is not complete yet.
    return read('rotated', rotated, stored.offset, current !== undefined);
  }
  return current ? read('current', current, 0, false) : { kind: 'idle' };
}

/** One line of a chunk and where it starts in its file. */
export interface FileLine {
  readonly offset: number;
  readonly bytes: Buffer;
}

/**
 * Splits the bytes `[from, from + chunk.length)` into complete lines. Returns the lines and the offset
 * after the last complete one (the new stored position). An incomplete last line waits for more
 * bytes, unless the file is `final` or the chunk is full without any newline (an oversized line is
 * passed on in pieces; the collector refuses each as too long). Blank lines are skipped; a trailing
 * `\r` is dropped.
 */
export function splitLines(
  chunk: Buffer,
  from: number,
  options: { final: boolean; full: boolean },
): { lines: FileLine[]; next: number } {
  const lines: FileLine[] = [];
  let start = 0;
  for (let newline = chunk.indexOf(10, start); newline >= 0; newline = chunk.indexOf(10, start)) {
    pushLine(lines, chunk.subarray(start, newline), from + start);
    start = newline + 1;
  }
  if (start < chunk.length && (options.final || (start === 0 && options.full))) {
    pushLine(lines, chunk.subarray(start), from + start);
    start = chunk.length;
  }
  return { lines, next: from + start };
}

function pushLine(lines: FileLine[], bytes: Buffer, offset: number): void {
  const trimmed = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, -1) : bytes;
  if (trimmed.toString('latin1').trim() === '') return;
  lines.push({ offset, bytes: trimmed });
}
