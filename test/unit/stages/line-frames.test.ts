import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRAME_MAX_BYTES, LINES_HEADER, LineFramer, linesOf } from '../../../src/stages/line-frames.ts';

const at = (offset: number) => ({ topic: 'in', partition: 0, offset });
const line = (text: string) => Buffer.from(text);
const linesOfOutput = (o: { value: Buffer | string | null; headers?: Record<string, Buffer | string> }) =>
  linesOf({ value: o.value === null ? null : Buffer.from(o.value), headers: o.headers ?? {} }).lines.map(
    String,
  );

test('lines of one topic and key share a frame in their order, counted in its header; a frame of several records names none', () => {
  const framer = new LineFramer();
  framer.add('t', 'a', line('1'), at(1));
  framer.add('t', 'b', line('2'), at(2));
  framer.add('t', 'a', line('3'), at(3));
  framer.add('u', 'a', line('4'), at(4));
  const outputs = framer.outputs();
  assert.deepEqual(
    outputs.map((o) => [o.topic, o.key, linesOfOutput(o), o.headers?.[LINES_HEADER], o.source?.offset]),
    [
      ['t', 'a', ['1', '3'], '2', undefined],
      ['t', 'b', ['2'], undefined, 2],
      ['u', 'a', ['4'], undefined, 4],
    ],
  );
});

test('a frame whose lines all came from one record names it as their source', () => {
  const framer = new LineFramer();
  framer.add('t', null, line('1'), at(7));
  framer.add('t', null, line('2'), at(7));
  const [frame] = framer.outputs();
  assert.deepEqual(linesOfOutput(frame!), ['1', '2']);
  assert.equal(frame!.source?.offset, 7);
});

test('a line with a newline or too long to share goes alone, unframed; a full frame is closed and a new one begun', () => {
  const framer = new LineFramer();
  const long = line('x'.repeat(FRAME_MAX_BYTES));
  const half = line('y'.repeat(FRAME_MAX_BYTES / 2));
  framer.add('t', 'k', line('a\nb'), at(1));
  framer.add('t', 'k', long, at(2));
  framer.add('t', 'k', half, at(3));
  framer.add('t', 'k', half, at(4));
  framer.add('t', 'k', line('z'), at(5));
  const outputs = framer.outputs();
  assert.deepEqual(
    outputs.map((o) => [o.headers?.[LINES_HEADER], o.source?.offset, String(o.value).length]),
    [
      [undefined, 1, 3],
      [undefined, 2, FRAME_MAX_BYTES],
      [undefined, 3, FRAME_MAX_BYTES / 2],
      ['2', undefined, FRAME_MAX_BYTES / 2 + 2],
    ],
  );
  assert.ok(outputs.every((o) => Buffer.byteLength(o.value as Buffer) <= FRAME_MAX_BYTES));
  assert.deepEqual(linesOf({ value: outputs[0]!.value as Buffer, headers: {} }).lines.map(String), ['a\nb']);
});

test('a record without the header is one line whatever it holds; a frame is split at every newline', () => {
  assert.deepEqual(linesOf({ value: line('a\nb'), headers: {} }), { lines: [line('a\nb')], framed: false });
  assert.deepEqual(linesOf({ value: null, headers: {} }), { lines: [Buffer.alloc(0)], framed: false });
  const framed = linesOf({ value: line('a\n\nb'), headers: { [LINES_HEADER]: Buffer.from('2') } });
  assert.deepEqual(framed.lines.map(String), ['a', '', 'b']);
  assert.equal(framed.framed, true);
});
