import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TransactionSpan } from '../../../src/runtime/transaction-span.ts';

const batch = (n: number, from = 0, partition = 0) =>
  Array.from({ length: n }, (_, i) => ({ topic: 'in', partition, offset: from + i }));

describe('TransactionSpan', () => {
  it('without an interval, every batch is due at once (one batch per transaction)', () => {
    const span = new TransactionSpan(undefined);
    assert.equal(span.due(0), false, 'nothing added, nothing to commit');
    span.add(batch(3), 0);
    assert.equal(span.due(0), true);
  });

  it('an empty interval behaves like no interval', () => {
    const span = new TransactionSpan({});
    span.add(batch(1), 0);
    assert.equal(span.due(0), true);
  });

  it('stays open until it holds maxRecords input records', () => {
    const span = new TransactionSpan({ maxRecords: 1000 });
    span.add(batch(500), 0);
    assert.equal(span.due(10_000), false, 'no time limit was set');
    span.add(batch(500, 500), 1);
    assert.equal(span.due(1), true);
    assert.equal(span.records.length, 1000);
    assert.equal(span.batches, 2);
  });

  it('stays open until maxMs after its first batch, counted from that batch', () => {
    const span = new TransactionSpan({ maxMs: 100 });
    span.add(batch(10), 1_000);
    span.add(batch(10, 10), 1_090);
    assert.equal(span.due(1_099), false);
    assert.equal(span.due(1_100), true);
  });

  it('is due at whichever limit comes first', () => {
    const span = new TransactionSpan({ maxMs: 100, maxRecords: 50 });
    span.add(batch(60), 0);
    assert.equal(span.due(1), true, 'records first');
    span.clear();
    span.add(batch(10), 0);
    assert.equal(span.due(100), true, 'time first');
  });

  it('shortens the consume timeout to the time left, never below zero', () => {
    const span = new TransactionSpan({ maxMs: 100 });
    assert.equal(span.consumeTimeoutMs(0, 50), 50, 'nothing open: the batch timeout');
    span.add(batch(1), 1_000);
    assert.equal(span.consumeTimeoutMs(1_020, 50), 50);
    assert.equal(span.consumeTimeoutMs(1_080, 50), 20);
    assert.equal(span.consumeTimeoutMs(1_200, 50), 0);
  });

  it('clear forgets the records and the start, so the next transaction counts afresh', () => {
    const span = new TransactionSpan({ maxMs: 100 });
    span.add(batch(5, 0, 1), 0);
    span.clear();
    assert.equal(span.open, false);
    assert.deepEqual(span.records, []);
    span.add(batch(1, 5, 1), 500);
    assert.equal(span.due(550), false, 'timed from its own first batch, not the cleared one');
  });
});
