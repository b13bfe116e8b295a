import type { FetchedRecord } from '../../src/kafka/records.ts';

/** A record of topic `t` whose value is its offset, as the record-error decisions see one. */
export const fetchedRecord = (
  partition: number,
  offset: number,
  headers: Record<string, Buffer> = {},
): FetchedRecord => ({
  topic: 't',
  partition,
  offset,
  key: null,
  value: Buffer.from(String(offset)),
  headers,
  timestamp: 0,
});
