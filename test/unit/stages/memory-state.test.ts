import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryPartitionState, MemoryStore } from '../../support/memory-state.ts';

// The fake must keep the KeyValueStore contract, or stage tests prove nothing about the real engine.

test('range yields entries in ascending string order within from <= key < to', () => {
  const store = new MemoryStore<number>();
  for (const key of ['l/b/2', 'o/a', 'l/a/10', 'l/a/09', 'l/a/', 'l/b']) store.put(key, key.length);
  assert.deepEqual(
    [...store.range({ from: 'l/a/', to: 'l/a/\uffff' })].map(([key]) => key),
    ['l/a/', 'l/a/09', 'l/a/10'],
  );
  assert.deepEqual(
    [...store.range({ from: 'l/b' })].map(([key]) => key),
    ['l/b', 'l/b/2', 'o/a'],
  );
  assert.deepEqual(
    [...store.range({ to: 'l/a/09' })].map(([key]) => key),
    ['l/a/'],
  );
  assert.equal([...store.range()].length, 6);
});

test('get, put, delete, has and size; values are copies, so an unsaved mutation is lost', () => {
  const store = new MemoryStore<{ n: number }>();
  assert.equal(store.get('k'), undefined);
  store.put('k', { n: 1 });
  store.get('k')!.n = 2;
  assert.deepEqual(store.get('k'), { n: 1 });
  assert.ok(store.has('k'));
  assert.equal(store.size, 1);
  store.delete('k');
  store.delete('absent');
  assert.equal(store.has('k'), false);
  assert.equal(store.size, 0);
  assert.throws(() => store.put('k', undefined as unknown as { n: number }), TypeError);
});

test('a partition state hands out one store per name and refuses undeclared names', () => {
  const state = new MemoryPartitionState(3, ['batches']);
  state.store<number>('batches').put('a', 1);
  assert.equal(state.store<number>('batches').get('a'), 1);
  assert.equal(state.partition, 3);
  assert.throws(() => state.store('other'), /not declared/);
});
