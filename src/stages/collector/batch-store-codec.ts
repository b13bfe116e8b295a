import { jsonCodec, type Codec } from '../../runtime/index.ts';
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
      return [line.id, line.micros, topic, source.partition, source.offset];
    });
    const header: LinesHeader = {
      kind: 'bytes' in value ? 'context' : 'lines',
      ...('bytes' in value ? { bytes: value.bytes } : {}),
      topics,
      meta,
    };
    return Buffer.from(`${JSON.stringify(header)}\n${value.lines.map((line) => line.json).join('\n')}`);
  },
  decode(bytes) {
    const text = bytes.toString('utf8');
    const end = text.indexOf('\n');
    if (end < 0) return JSON.parse(text) as unknown;
    const header = JSON.parse(text.slice(0, end)) as LinesHeader;
    const texts = text.slice(end + 1).split('\n');
    const lines = header.meta.map(([id, micros, topic, partition, offset], i): ContextLine | StoredLine => {
      // Literals, not `{ ...line, source }`: V8 runs a spread followed by a key in its runtime.
      if (topic === undefined) return { json: texts[i]!, id, micros };
      const source = { topic: header.topics[topic]!, partition: partition!, offset: offset! };
      return { json: texts[i]!, id, micros, source };
    });
    if (header.kind === 'context') return { v: 2, lines, bytes: header.bytes ?? 0 } satisfies ContextEntry;
    return { v: 2, lines: lines as StoredLine[] } satisfies LinesEntry;
  },
};

interface LinesHeader {
  readonly kind: 'lines' | 'context';
  readonly bytes?: number;
  /** The source topics of the lines, each once. */
  readonly topics: readonly string[];
  /** Per line: id, micros and, for lines of an open batch, topic index, partition and offset. */
  readonly meta: readonly LineMeta[];
}

type LineMeta = [id: string, micros: number, topic?: number, partition?: number, offset?: number];
