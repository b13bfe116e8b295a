import { jsonCodec, type Codec } from '../../runtime/index.ts';
import type { LinePosition } from '../line-frames.ts';
import {
  isTextEntry,
  type ContextEntry,
  type ContextLine,
  type LinesEntry,
  type StoredLine,
} from './stored-lines.ts';

/**
 * The codec of the collector's `batches` store. Entries holding lines (an open batch's, a previous
 * batch's) are written as a JSON header line and then each line's JSON text on a line of its own;
 * every other value is plain JSON. The line texts are stored as they are: as strings inside JSON
 * they were escaped at every write and unescaped at every read, a twentieth of a busy collector.
 *
 * `JSON.stringify` never writes a raw newline (it escapes them in strings and adds no whitespace),
 * so a value with a newline is an entry of lines and one without is JSON, whichever version wrote it.
 *
 * Each line text ends with `,"logline_id":"<id>","subnet_id":"<subnet>"}` (the collector appends
 * both), a third of what it stores beyond the input line: the id is in the header's meta anyway and
 * every line of an entry has the same subnet. So that ending is cut off every line and the subnet's
 * text kept once in the header (`subnet`), and decoding puts it back byte for byte; an entry where a
 * line does not end so is stored whole (no `subnet`), as entries written before this were.
 */
export const batchStoreCodec: Codec<unknown> = {
  encode(value) {
    if (!isTextEntry(value)) return jsonCodec.encode(value);
    const topics: string[] = [];
    const meta = value.lines.map((line): LineMeta => {
      const source = (line as Partial<StoredLine>).source;
      if (!source) return [line.id, line.micros];
      let topic = topics.indexOf(source.topic);
      if (topic < 0) topic = topics.push(source.topic) - 1;
      if (source.line === undefined) return [line.id, line.micros, topic, source.partition, source.offset];
      return [line.id, line.micros, topic, source.partition, source.offset, source.line];
    });
    const trimmed = trimLines(value.lines);
    const header: LinesHeader = {
      kind: 'bytes' in value ? 'context' : 'lines',
      ...('bytes' in value ? { bytes: value.bytes } : {}),
      topics,
      meta,
      ...(trimmed ? { subnet: trimmed.subnet } : {}),
    };
    const texts = trimmed ? trimmed.texts : value.lines.map((line) => line.json);
    return Buffer.from(`${JSON.stringify(header)}\n${texts.join('\n')}`);
  },
  decode(bytes) {
    const text = bytes.toString('utf8');
    const end = text.indexOf('\n');
    if (end < 0) return JSON.parse(text) as unknown;
    const header = JSON.parse(text.slice(0, end)) as LinesHeader;
    const texts = text.slice(end + 1).split('\n');
    const subnet = header.subnet;
    const lines = header.meta.map(
      ([id, micros, topic, partition, offset, at], i): ContextLine | StoredLine => {
        // A header's meta and its texts are written together: one text per meta entry.
        const stored = texts[i] ?? '';
        const json = subnet === undefined ? stored : `${stored}${idMarker(id)}${subnet}}`;
        // Literals, not `{ ...line, source }`: V8 runs a spread followed by a key in its runtime.
        if (topic === undefined) return { json, id, micros };
        const source: LinePosition =
          at === undefined
            ? { topic: header.topics[topic]!, partition: partition!, offset: offset! }
            : { topic: header.topics[topic]!, partition: partition!, offset: offset!, line: at };
        return { json, id, micros, source };
      },
    );
    if (header.kind === 'context') return { v: 2, lines, bytes: header.bytes ?? 0 } satisfies ContextEntry;
    return { v: 2, lines: lines as StoredLine[] } satisfies LinesEntry;
  },
};

/** What precedes the subnet's text at the end of a line text: the line's id as the collector writes it. */
function idMarker(id: string): string {
  return `,"logline_id":${JSON.stringify(id)},"subnet_id":`;
}

/**
 * Each line's text without its `<id marker><subnet>}` ending, and the subnet's JSON text they share;
 * undefined when a line does not end so (then the texts are stored whole). Cut by position and put
 * back by concatenation, so decoding gives the very text encoded, whatever the line holds.
 */
function trimLines(lines: readonly ContextLine[]): { subnet: string; texts: string[] } | undefined {
  let subnet: string | undefined;
  const texts: string[] = [];
  for (const line of lines) {
    const marker = idMarker(line.id);
    const at = line.json.lastIndexOf(marker);
    if (at < 0 || !line.json.endsWith('}')) return undefined;
    const own = line.json.slice(at + marker.length, -1);
    if (subnet !== undefined && own !== subnet) return undefined;
    subnet = own;
    texts.push(line.json.slice(0, at));
  }
  return subnet === undefined ? undefined : { subnet, texts };
}

interface LinesHeader {
  readonly kind: 'lines' | 'context';
  /** The subnet's JSON text cut off the end of every line text with its id (see batchStoreCodec). */
  readonly subnet?: string;
  readonly bytes?: number;
  /** The source topics of the lines, each once. */
  readonly topics: readonly string[];
  /**
   * Per line: id, micros and, for lines of an open batch, topic index, partition, offset and, for a
   * line read from a frame, its index there.
   */
  readonly meta: readonly LineMeta[];
}

type LineMeta = [
  id: string,
  micros: number,
  topic?: number,
  partition?: number,
  offset?: number,
  line?: number,
];
