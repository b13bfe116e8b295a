import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchStoreCodec } from '../../../src/stages/collector/batch-store-codec.ts';
import type { ContextEntry, LinesEntry } from '../../../src/stages/collector/stored-lines.ts';

const text = (i: number) =>
  JSON.stringify({ logline_id: `id-${i}`, note: 'a "quoted"\nnewline and ü', ts: `2026-11-30T00:00:0${i}Z` });

test('entries of lines keep each line text as it is, with their ids, times and source positions', () => {
  const lines: LinesEntry = {
    v: 2,
    lines: [1, 2, 3, 4].map((i) => ({
      json: text(i),
      id: `id-${i}`,
      micros: 1_000_000 * i + 7,
      // The fourth line was read from a frame: its index there is part of its position.
      source: {
        topic: i === 3 ? 'other' : 'in',
        partition: 2,
        offset: 40 + i,
        ...(i === 4 ? { line: 0 } : {}),
      },
    })),
  };
  const context: ContextEntry = {
    v: 2,
    lines: [1, 2].map((i) => ({ json: text(i), id: `id-${i}`, micros: i })),
    bytes: 321,
  };
  for (const entry of [lines, context]) {
    const bytes = batchStoreCodec.encode(entry);
    assert.ok(bytes.includes(Buffer.from(text(1))), 'the line text is stored unescaped');
    assert.deepEqual(batchStoreCodec.decode(bytes), entry);
  }
});

test('every other value, and what earlier versions wrote, is plain JSON', () => {
  const values: unknown[] = [
    { openedAt: 5, count: 2, next: 2, lastSource: { topic: 'in', partition: 0, offset: 1 }, bytes: 90 },
    1_796_058_188_603,
    [
      {
        line: { logline_id: 'l', ts: '2026-11-30T00:00:00Z' },
        source: { topic: 'in', partition: 0, offset: 1 },
      },
    ],
    { lines: [{ logline_id: 'l' }], bytes: 3 },
  ];
  for (const value of values) {
    const bytes = batchStoreCodec.encode(value);
    assert.equal(bytes.toString(), JSON.stringify(value));
    assert.deepEqual(batchStoreCodec.decode(bytes), value);
  }
});

/** A line text as the collector makes it: its fields, then logline_id and subnet_id last. */
const collected = (i: number, subnet = '10.0.1.0_24') =>
  JSON.stringify({
    ts: `2026-11-30T00:00:0${i}.000000Z`,
    domain_name: `n${i}.example.com`,
    logline_id: `id-${i}`,
    subnet_id: subnet,
  });

test("the collector's lines are stored without their id and subnet ending, and decode to the very same text", () => {
  const entry: LinesEntry = {
    v: 2,
    lines: [1, 2, 3].map((i) => ({
      json: collected(i),
      id: `id-${i}`,
      micros: i,
      source: { topic: 'in', partition: 0, offset: i },
    })),
  };
  const bytes = batchStoreCodec.encode(entry);
  assert.ok(!bytes.includes(Buffer.from('"subnet_id"')), 'the ending is cut off');
  const whole = Buffer.byteLength(entry.lines.map((l) => l.json).join('\n'));
  assert.ok(bytes.length < whole, `${bytes.length} bytes stored for ${whole} bytes of line texts`);
  assert.deepEqual(batchStoreCodec.decode(bytes), entry);
});

test('an entry whose lines differ in subnet, or one not ending so, keeps every text whole', () => {
  const mixed: ContextEntry = {
    v: 2,
    lines: [
      { json: collected(1), id: 'id-1', micros: 1 },
      { json: collected(2, '10.0.2.0_24'), id: 'id-2', micros: 2 },
    ],
    bytes: 10,
  };
  const foreign: ContextEntry = {
    v: 2,
    lines: [
      { json: collected(1), id: 'id-1', micros: 1 },
      // Its id is not the one in its text: cut and put back with the meta's id, it would change.
      { json: collected(2), id: 'other', micros: 2 },
    ],
    bytes: 10,
  };
  for (const entry of [mixed, foreign]) {
    const bytes = batchStoreCodec.encode(entry);
    assert.ok(bytes.includes(Buffer.from(collected(1))), 'stored whole');
    assert.deepEqual(batchStoreCodec.decode(bytes), entry);
  }
});
