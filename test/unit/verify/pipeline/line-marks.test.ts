import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineIdOf, lineMark, markJsonLine } from '../../../../src/verify/pipeline/line-marks.ts';

test('a marked JSON line carries its id as its first field, and the id is found again', () => {
  const marked = markJsonLine('{"ts":"x","src_ip":"10.0.0.1"}', 17);
  assert.ok(marked.startsWith('{"verify_line":17,'));
  assert.equal(lineIdOf(marked), 17);
  assert.equal(lineIdOf(Buffer.from(marked)), 17);
});

test('the mark is found among invalid UTF-8, and 1 is not read from the mark of 12', () => {
  const hostile = Buffer.concat([
    Buffer.from(`{${lineMark(12)},"ts":"`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}'),
  ]);
  assert.equal(lineIdOf(hostile), 12);
  assert.equal(lineIdOf(`not json ${lineMark(1)}`), 1);
  assert.equal(lineIdOf('{"verify_line":"1"}'), undefined);
  assert.equal(lineIdOf('no mark'), undefined);
});
