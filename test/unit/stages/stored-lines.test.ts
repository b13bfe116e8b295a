import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  contextOfEntry,
  lineCost,
  linesOfEntry,
  textCost,
} from '../../../src/stages/collector/stored-lines.ts';
import { encodeBatch, encodeBatchText, type Batch, type LogLine } from '../../../src/stages/messages.ts';

const line = (i: number): LogLine => ({
  logline_id: `id-${i}`,
  subnet_id: '10.0.0.0_24',
  ts: `2026-11-30T00:00:0${i}.000001Z`,
  src_ip: '10.0.0.7',
  domain_name: `host-${i}.example.com`,
  note: 'quote " and ünïcode',
});
const source = (offset: number) => ({ topic: 'in', partition: 1, offset });

test('a batch spliced from line texts is byte for byte the batch encodeBatch writes, with and without context', () => {
  const lines = [line(1), line(2), line(3)];
  for (const context of [undefined, ['id-1']]) {
    const batch: Batch = {
      batch_tree_row_id: 'tree',
      batch_id: 'batch',
      begin_timestamp: lines[0]!.ts,
      end_timestamp: lines[2]!.ts,
      data: lines,
      ...(context ? { context_logline_ids: context } : {}),
    };
    const { data, ...rest } = batch;
    assert.equal(encodeBatchText({ ...rest, data: data.map((l) => JSON.stringify(l)) }), encodeBatch(batch));
  }
});

test('line entries of earlier versions read as texts: one line per entry, then an array per entry', () => {
  const expected = [1, 2].map((i) => ({
    json: JSON.stringify(line(i)),
    id: `id-${i}`,
    micros: Date.parse(line(i).ts.replace('.000001', '')) * 1000 + 1,
    source: source(i),
  }));
  assert.deepEqual(linesOfEntry({ line: line(1), source: source(1) }), [expected[0]]);
  assert.deepEqual(linesOfEntry([1, 2].map((i) => ({ line: line(i), source: source(i) }))), expected);
  assert.deepEqual(linesOfEntry({ v: 2, lines: expected }), expected);
});

test('context of earlier versions reads with its cost: a plain array, then lines with their bytes', () => {
  const lines = [line(1), line(2)];
  const bytes = lines.reduce((sum, l) => sum + lineCost(l), 0);
  for (const stored of [lines, { lines, bytes }]) {
    const context = contextOfEntry(stored);
    assert.deepEqual(
      context.lines.map((l) => l.json),
      lines.map((l) => JSON.stringify(l)),
    );
    assert.equal(context.bytes, bytes);
  }
  assert.deepEqual(contextOfEntry(undefined), { lines: [], bytes: 0 });
});

test('a line costs its UTF-8 JSON, its quoted id and two commas', () => {
  const l = line(1);
  const json = JSON.stringify(l);
  assert.equal(textCost({ json, id: l.logline_id }), Buffer.byteLength(json) + '"id-1"'.length + 2);
  assert.ok(Buffer.byteLength(json) > json.length, 'the test line has multi-byte characters');
});
