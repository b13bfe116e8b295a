import type { HamstringConfig } from '../../config/index.ts';
import { createEveDecoder } from '../../sources/suricata/eve-decoder.ts';
import type { LineDecoder, LineOrigin } from '../../sources/line-decoder.ts';
import { DEFAULT_LOG_LINE_MAPPING, toLogLine, type LogLineMapping } from '../../sources/log-line.ts';
import { createZeekJsonDecoder } from '../../sources/zeek/zeek-json.ts';
import { createZeekTsvDecoder } from '../../sources/zeek/zeek-tsv.ts';
import type { FileLine } from './file-position.ts';

type LogserverConfig = HamstringConfig['pipeline']['log_storage']['logserver'];

/** What one read of a decoded input file gives: log lines to forward and rows that failed, each named by its origin. */
export type DecodedItem =
  | { readonly kind: 'line'; readonly origin: LineOrigin; readonly bytes: Buffer }
  | { readonly kind: 'failed'; readonly origin: LineOrigin; readonly reason: string; readonly text: string };

export interface FileDecoding {
  /**
   * Decodes the lines of one read. `saved` is the decoder memory stored with the position before
   * the read, `newFile` says the read starts a file other than the stored one, `atEnd` that it read
   * all the file holds for now. Returns the items and the memory to store with the new position.
   */
  decode(
    lines: readonly FileLine[],
    context: { saved: unknown; file: string; newFile: boolean; atEnd: boolean },
  ): { items: DecodedItem[]; saved: unknown };
}

/** The decoding of `input_format`, or undefined for `hamstring` (lines are forwarded as they are). */
export function fileDecoding(config: LogserverConfig): FileDecoding | undefined {
  const format = config.input_format;
  if (format === 'hamstring') return undefined;
  const mapping: LogLineMapping = config.log_line ?? DEFAULT_LOG_LINE_MAPPING;
  const create = (saved: unknown): LineDecoder => {
    switch (format) {
      case 'zeek-tsv':
        return createZeekTsvDecoder(saved);
      case 'zeek-json':
        return createZeekJsonDecoder();
      case 'suricata-eve':
        return createEveDecoder(saved, {
          maxPending: config.max_pending_queries,
          pairWindowMicros: config.pair_window_seconds * 1_000_000,
        });
    }
  };
  return {
    decode(lines, { saved, file, newFile, atEnd }) {
      const decoder = create(saved);
      if (newFile) decoder.startFile();
      const items: DecodedItem[] = [];
      const outcomes = lines.flatMap((line) =>
        decoder.decode(line.bytes.toString('utf8'), { file, offset: line.offset }),
      );
      if (atEnd) outcomes.push(...decoder.drain());
      for (const outcome of outcomes) {
        if (outcome.kind === 'observation') {
          const bytes = Buffer.from(toLogLine(outcome.observation, mapping));
          items.push({ kind: 'line', origin: outcome.origin, bytes });
        } else if (outcome.kind === 'malformed') {
          const reason = `${format}: ${outcome.reason}`;
          items.push({ kind: 'failed', origin: outcome.origin, reason, text: outcome.text });
        }
      }
      return { items, saved: decoder.save() };
    },
  };
}
