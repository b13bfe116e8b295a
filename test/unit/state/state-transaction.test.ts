import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommittedStore } from '../../../src/runtime/state/committed-store.ts';
import { StateTransaction } from '../../../src/runtime/state/state-transaction.ts';
import { partitionState } from '../../../src/runtime/state/transaction-stores.ts';
import { jsonCodec } from '../../../src/runtime/state/codecs.ts';

const b = (s: string) => Buffer.from(s);

function committedWith(entries: Record<string, string>) {
  const store = new CommittedStore();
  for (const [k, v] of Object.entries(entries)) store.apply(k, b(v));
  return store;
}

function setup(entries: Record<string, string> = {}) {
  const committed = committedWith(entries);
  const lookup = (store: string, partition: number) => {
    assert.equal(store, 's');
    assert.equal(partition, 0);
    return committed;
  };
  return { committed, lookup };
}

const keys = (it: Iterable<[string, Buffer]>) => [...it].map(([k, v]) => `${k}=${v.toString()}`);

describe('StateTransaction', () => {
  it('reads its own writes over the committed view and never changes the committed view', () => {
    const { committed, lookup } = setup({ a: '1', b: '2' });
    const t = new StateTransaction(1, lookup, undefined);
    t.write('s', 0, 'a', b('10'));
    t.write('s', 0, 'b', null);
    t.write('s', 0, 'c', b('3'));
    assert.equal(t.read('s', 0, 'a')?.toString(), '10');
    assert.equal(t.read('s', 0, 'b'), undefined);
    assert.equal(t.size('s', 0), 2);
    assert.deepEqual(keys(t.range('s', 0)), ['a=10', 'c=3']);
    assert.deepEqual(keys(committed.range()), ['a=1', 'b=2']);
  });

  it('rolls back to a savepoint: the writes of a discarded process call leave no trace', () => {
    const { lookup } = setup({ a: '1' });
    const t = new StateTransaction(1, lookup, undefined);
    t.write('s', 0, 'a', b('2'));
    const sp = t.savepoint();
    t.write('s', 0, 'a', b('3'));
    t.write('s', 0, 'x', b('9'));
    t.write('s', 0, 'a', null);
    t.rollbackTo(sp);
    assert.equal(t.read('s', 0, 'a')?.toString(), '2');
    assert.equal(t.read('s', 0, 'x'), undefined);
    assert.equal(t.size('s', 0), 1);
    assert.deepEqual(
      [...t.changes()].map((c) => [c.key, c.value?.toString()]),
      [['a', '2']],
    );
  });

  it('a transaction that follows an open one reads its changes; sizes add up along the chain', () => {
    const { lookup } = setup({ a: '1' });
    const first = new StateTransaction(1, lookup, undefined);
    first.write('s', 0, 'b', b('2'));
    const second = new StateTransaction(2, lookup, first);
    second.write('s', 0, 'a', null);
    second.write('s', 0, 'c', b('3'));
    assert.equal(second.read('s', 0, 'b')?.toString(), '2');
    assert.equal(second.size('s', 0), 2);
    assert.deepEqual(keys(second.range('s', 0)), ['b=2', 'c=3']);
    assert.deepEqual(
      [...second.changes()].map((c) => c.key),
      ['a', 'c'],
      'only its own changes go to its changelog records',
    );
  });

  it('ranges are bounded from <= key < to and in JavaScript string order', () => {
    const { lookup } = setup({ 'k/1': 'x', 'k/3': 'x', 'k/5': 'x', z: 'x' });
    const t = new StateTransaction(1, lookup, undefined);
    t.write('s', 0, 'k/2', b('y'));
    t.write('s', 0, 'k/3', null);
    t.write('s', 0, 'K', b('y'));
    assert.deepEqual(
      [...t.range('s', 0, 'k/', 'k/5')].map(([k]) => k),
      ['k/1', 'k/2'],
    );
    assert.deepEqual(
      [...t.range('s', 0)].map(([k]) => k),
      ['K', 'k/1', 'k/2', 'k/5', 'z'],
    );
  });

  it('deleting entries while iterating a range visits each remaining key once', () => {
    const { lookup } = setup({ a: '1', b: '2', c: '3' });
    const t = new StateTransaction(1, lookup, undefined);
    const seen: string[] = [];
    for (const [k] of t.range('s', 0)) {
      seen.push(k);
      t.write('s', 0, k, null);
    }
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal(t.size('s', 0), 0);
  });

  it('refuses writes once committed or aborted', () => {
    const { lookup } = setup();
    const t = new StateTransaction(1, lookup, undefined);
    t.markAborted();
    assert.throws(() => t.write('s', 0, 'a', b('1')), /aborted/);
  });
});

describe('partition stores over a transaction', () => {
  it('encode on put, so mutating a value after put changes nothing stored', () => {
    const { lookup } = setup();
    const t = new StateTransaction(1, lookup, undefined);
    const store = partitionState(t, 0, new Map([['s', jsonCodec]])).store<{ n: number }>('s');
    const v = { n: 1 };
    store.put('a', v);
    v.n = 2;
    assert.deepEqual(store.get('a'), { n: 1 });
    assert.equal(store.has('a'), true);
    store.delete('a');
    assert.equal(store.has('a'), false);
    assert.equal(store.size, 0);
  });

  it('names the declared stores when an unknown one is asked for', () => {
    const { lookup } = setup();
    const t = new StateTransaction(1, lookup, undefined);
    assert.throws(() => partitionState(t, 0, new Map([['s', jsonCodec]])).store('nope'), /declared: s/);
  });
});
