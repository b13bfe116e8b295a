import type { RecordPosition, StageOutput } from '../runtime/index.ts';

/**
 * The header of a record that carries several input lines: its value is the lines joined by a
 * newline, and the header's value their count. A record without it is one line, as every record
 * was before frames: a collector reads both, so collectors are upgraded before logservers.
 *
 * Why frames: a Kafka record costs the logserver a produce call and a delivery, the broker its
 * share of a batch and the collector a fetched record, about a pass-through hop (25-30 µs of CPU at
 * 500 records a transaction) for every line; lines of one subnet share a record instead.
 */
export const LINES_HEADER = 'hamstring-lines';

/**
 * The most bytes of lines one frame carries. Far below Kafka's default record limit (1 MiB) and the
 * collector's batches, so a topic that takes the collector's batches takes its frames: a frame of
 * several records names no source, and a refusal it drew could not be traced to one line.
 */
export const FRAME_MAX_BYTES = 64 * 1024;

const NEWLINE = 0x0a;
const SEPARATOR = Buffer.from([NEWLINE]);

/** Where a line was read: its record's position and, for a line of a frame, its index there. */
export interface LinePosition extends RecordPosition {
  readonly line?: number;
}

interface OpenFrame {
  readonly topic: string;
  readonly key: Buffer | string | null;
  readonly parts: Buffer[];
  readonly sources: (RecordPosition | undefined)[];
  bytes: number;
}

/**
 * Collects one call's lines per output topic and key into frames. A frame of a single line leaves
 * as the plain line record it was before frames (its source named, so a refusal is traced to it);
 * a line with a newline in it, or too long to share a frame, leaves alone the same way. Lines of
 * one topic and key keep their order.
 */
export class LineFramer {
  readonly #open = new Map<string, OpenFrame>();
  readonly #outputs: StageOutput[] = [];

  /** `source`: the input record the line came from, when the caller names one. */
  add(topic: string, key: Buffer | string | null, line: Buffer, source?: RecordPosition): void {
    if (line.length >= FRAME_MAX_BYTES || line.includes(NEWLINE)) {
      this.#outputs.push(single(topic, key, line, source));
      return;
    }
    const id = `${topic}\u0000${key === null ? '' : `k${key.toString()}`}`;
    let frame = this.#open.get(id);
    if (frame && frame.bytes + 1 + line.length > FRAME_MAX_BYTES) {
      this.#outputs.push(closed(frame));
      frame = undefined;
    }
    if (!frame) {
      frame = { topic, key, parts: [], sources: [], bytes: -1 };
      this.#open.set(id, frame);
    }
    frame.parts.push(line);
    frame.sources.push(source);
    frame.bytes += 1 + line.length;
  }

  /** Every frame and line record of the call, open frames closed. */
  outputs(): StageOutput[] {
    for (const frame of this.#open.values()) this.#outputs.push(closed(frame));
    this.#open.clear();
    return this.#outputs;
  }
}

function single(
  topic: string,
  key: Buffer | string | null,
  value: Buffer,
  source: RecordPosition | undefined,
): StageOutput {
  return source ? { topic, key, value, source } : { topic, key, value };
}

function closed(frame: OpenFrame): StageOutput {
  const { topic, key, parts, sources } = frame;
  if (parts.length === 1) return single(topic, key, parts[0]!, sources[0]);
  const joined: Buffer[] = [];
  for (const part of parts) {
    if (joined.length > 0) joined.push(SEPARATOR);
    joined.push(part);
  }
  const value = Buffer.concat(joined);
  const headers = { [LINES_HEADER]: String(parts.length) };
  const source = commonSource(sources);
  return source ? { topic, key, value, headers, source } : { topic, key, value, headers };
}

/** The input record every line of a frame came from, if they all came from one. */
function commonSource(sources: readonly (RecordPosition | undefined)[]): RecordPosition | undefined {
  const first = sources[0];
  if (!first) return undefined;
  for (const s of sources)
    if (!s || s.offset !== first.offset || s.partition !== first.partition || s.topic !== first.topic)
      return undefined;
  return first;
}

/**
 * The lines of a record: a frame's, or the record's value as its only line (`framed` false). A
 * frame's count header is not trusted: its lines are what its newlines separate.
 */
export function linesOf(record: {
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, unknown>>;
}): {
  readonly lines: readonly Buffer[];
  readonly framed: boolean;
} {
  const value = record.value ?? Buffer.alloc(0);
  if (record.headers[LINES_HEADER] === undefined) return { lines: [value], framed: false };
  const lines: Buffer[] = [];
  let start = 0;
  for (;;) {
    const end = value.indexOf(NEWLINE, start);
    lines.push(value.subarray(start, end < 0 ? value.length : end));
    if (end < 0) return { lines, framed: true };
    start = end + 1;
  }
}
