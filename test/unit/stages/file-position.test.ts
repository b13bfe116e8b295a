import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRead, splitLines } from '../../../src/stages/logserver/file-position.ts';

const file = (ino: number, size: number) => ({ dev: 1, ino, size });
const at = (ino: number, offset: number) => ({ dev: 1, ino, offset });

test('a file never read is read from its start, at most one chunk', () => {
  assert.deepEqual(planRead(file(7, 5000), undefined, undefined, 4096), {
    kind: 'read',
    file: 'current',
    identity: file(7, 5000),
    from: 0,
    to: 4096,
    final: false,
  });
});

test('the same file is read on from the stored offset, and idles when it has not grown', () => {
  assert.deepEqual(planRead(file(7, 300), at(7, 120), undefined, 4096), {
    kind: 'read',
    file: 'current',
    identity: file(7, 300),
    from: 120,
    to: 300,
    final: false,
  });
  assert.deepEqual(planRead(file(7, 120), at(7, 120), undefined, 4096), { kind: 'idle' });
});

test('a file truncated below the stored offset is read again from its start', () => {
  const plan = planRead(file(7, 50), at(7, 120), undefined, 4096);
  assert.equal(plan.kind === 'read' && plan.from, 0);
});

test('after a rename the rest of the renamed file is read first, then the new file from its start', () => {
  const rest = planRead(file(8, 40), at(7, 120), file(7, 200), 4096);
  assert.deepEqual(rest, {
    kind: 'read',
    file: 'rotated',
    identity: file(7, 200),
    from: 120,
    to: 200,
    final: true,
  });
  const next = planRead(file(8, 40), at(7, 200), file(7, 200), 4096);
  assert.deepEqual(next, {
    kind: 'read',
    file: 'current',
    identity: file(8, 40),
    from: 0,
    to: 40,
    final: false,
  });
  const renamedAway = planRead(file(8, 40), at(7, 120), undefined, 4096);
  assert.equal(renamedAway.kind === 'read' && renamedAway.file, 'current');
});

test('a renamed file with no new file yet: its writer may still append, so a last partial line waits', () => {
  const plan = planRead(undefined, at(7, 120), file(7, 200), 4096);
  assert.deepEqual(plan, {
    kind: 'read',
    file: 'rotated',
    identity: file(7, 200),
    from: 120,
    to: 200,
    final: false,
  });
});

test('no file at the path: nothing to read', () => {
  assert.deepEqual(planRead(undefined, at(7, 10), undefined, 4096), { kind: 'idle' });
});

test('lines: only complete lines are taken and the position stops after the last newline', () => {
  const { lines, next } = splitLines(Buffer.from('one\r\ntwo\n\n  \nthr'), 100, {
    final: false,
    full: false,
  });
  assert.deepEqual(
    lines.map((line) => [line.offset, line.bytes.toString()]),
    [
      [100, 'one'],
      [105, 'two'],
    ],
  );
  assert.equal(next, 113);
});

test('lines: a final file gives its unterminated last line; a full chunk without newline is one line', () => {
  const final = splitLines(Buffer.from('a\nlast'), 0, { final: true, full: false });
  assert.deepEqual(
    final.lines.map((line) => line.bytes.toString()),
    ['a', 'last'],
  );
  assert.equal(final.next, 6);
  const full = splitLines(Buffer.from('xxxx'), 8, { final: false, full: true });
  assert.deepEqual(
    full.lines.map((line) => [line.offset, line.bytes.toString()]),
    [[8, 'xxxx']],
  );
  assert.equal(full.next, 12);
});
