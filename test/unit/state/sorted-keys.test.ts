import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommittedStore } from '../../../src/runtime/state/committed-store.ts';

describe('CommittedStore sorted keys', () => {
  it('stay sorted through few and many changes after the first range', () => {
    const s = new CommittedStore();
    for (const k of ['d', 'b', 'a']) s.apply(k, Buffer.from('x'));
    assert.deepEqual(s.sortedKeys(), ['a', 'b', 'd']);
    s.apply('c', Buffer.from('x'));
    s.apply('a', null);
    s.apply('b', Buffer.from('y'));
    assert.deepEqual(s.sortedKeys(), ['b', 'c', 'd']);
    for (let i = 0; i < 1000; i++) s.apply(`k${String(i).padStart(4, '0')}`, Buffer.from('x'));
    s.apply('c', null);
    const sorted = s.sortedKeys();
    assert.equal(sorted.length, 1002);
    assert.deepEqual([...sorted], [...s.entries.keys()].sort());
  });
});
