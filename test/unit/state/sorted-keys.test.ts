import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommittedStore, type CommittedBase } from '../../../src/runtime/state/committed-store.ts';

const b = (s: string) => Buffer.from(s);

function baseOf(entries: Record<string, string>): CommittedBase {
  const sorted = Object.keys(entries).sort();
  return {
    get: (k) => (k in entries ? b(entries[k]!) : undefined),
    *range(from, to) {
      for (const k of sorted)
        if ((from === undefined || k >= from) && (to === undefined || k < to)) yield [k, b(entries[k]!)];
    },
    count: () => sorted.length,
  };
}

const entries = (s: CommittedStore, from?: string, to?: string) =>
  [...s.range(from, to)].map(([k, v]) => `${k}=${v.toString()}`);

describe('CommittedStore', () => {
  it('keeps its keys in order through few and many changes after the first range', () => {
    const s = new CommittedStore();
    for (const k of ['d', 'b', 'a']) s.apply(k, b('x'));
    assert.deepEqual(entries(s), ['a=x', 'b=x', 'd=x']);
    s.apply('c', b('x'));
    s.apply('a', null);
    s.apply('b', b('y'));
    assert.deepEqual(entries(s), ['b=y', 'c=x', 'd=x']);
    for (let i = 0; i < 1000; i++) s.apply(`k${String(i).padStart(4, '0')}`, b('x'));
    s.apply('c', null);
    const keys = [...s.range()].map(([k]) => k);
    assert.equal(keys.length, 1002);
    assert.deepEqual(keys, [...keys].sort());
    assert.equal(s.size, 1002);
  });

  it('reads the local copy in place under the committed changes it does not show yet', () => {
    const s = new CommittedStore(baseOf({ a: '1', b: '2', c: '3' }));
    assert.equal(s.size, 3);
    s.apply('b', null);
    s.apply('bb', b('9'));
    s.apply('c', b('30'));
    assert.equal(s.get('a')?.toString(), '1');
    assert.equal(s.get('b'), undefined);
    assert.equal(s.size, 3);
    assert.deepEqual(entries(s), ['a=1', 'bb=9', 'c=30']);
    assert.deepEqual(entries(s, 'b', 'c'), ['bb=9']);
  });

  it('forgets a change once the copy shows it, unless it changed again since', () => {
    const s = new CommittedStore(baseOf({}));
    const first = b('1');
    s.apply('k', first);
    const second = b('2');
    s.apply('k', second);
    s.written('k', first);
    assert.equal(s.overlaySize, 1, 'a newer change stays');
    s.written('k', second);
    assert.equal(s.overlaySize, 0);
  });

  it('counts again after a restore that skipped the per-record lookups', () => {
    const s = new CommittedStore(baseOf({ a: '1', b: '2' }));
    s.restore('b', null);
    s.restore('c', b('3'));
    s.restore('d', null);
    s.recount();
    assert.equal(s.size, 2);
    assert.deepEqual(entries(s), ['a=1', 'c=3']);
  });
});
