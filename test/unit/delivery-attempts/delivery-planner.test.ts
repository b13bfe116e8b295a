import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryPlanner } from '../../../src/runtime/delivery-attempts/delivery-planner.ts';
import { InMemoryAttemptStore } from '../../../src/runtime/delivery-attempts/in-memory-attempt-store.ts';
import { fetchedRecord } from '../../support/fetched-record.ts';

const batch = [fetchedRecord(0, 10), fetchedRecord(0, 11), fetchedRecord(0, 12)];
const tp = [{ topic: 't', partition: 0 }];

test('a batch delivered more than max_deliveries times without a commit is searched, then its first record is poison', async () => {
  const planner = new DeliveryPlanner(new InMemoryAttemptStore(), 'g', 2);
  assert.equal((await planner.plan(batch)).process.length, 3);
  assert.equal((await planner.plan(batch)).process.length, 3);
  const third = await planner.plan(batch);
  assert.deepEqual(
    third.process.map((r) => r.offset),
    [10],
    'the third delivery searches one record at a time',
  );
  await planner.plan(batch);
  const poisoned = await planner.plan(batch);
  assert.deepEqual(
    poisoned.poison.map((r) => r.offset),
    [10],
  );
});

test('deliveries the stage finished before the transaction aborted do not count: forgiven, any number of aborts leave the batch whole', async () => {
  const store = new InMemoryAttemptStore();
  const planner = new DeliveryPlanner(store, 'g', 2);
  for (let abort = 0; abort < 10; abort += 1) {
    const plan = await planner.plan(batch);
    assert.equal(plan.process.length, 3, `delivery ${abort + 1} processes the whole batch`);
    assert.equal(plan.poison.length, 0);
    planner.forgive(tp);
  }
  assert.equal(
    planner.deliveries({ topic: 't', partition: 0, offset: 10 }),
    undefined,
    'forgiven to no marker',
  );
  // A delivery that never completed (a crash: nothing forgives it) still counts.
  await planner.plan(batch);
  await planner.plan(batch);
  assert.deepEqual(
    (await planner.plan(batch)).process.map((r) => r.offset),
    [10],
  );
});

test('a forgiven partition that another owner reads from the store counts the stored delivery', async () => {
  const store = new InMemoryAttemptStore();
  const first = new DeliveryPlanner(store, 'g', 5);
  await first.plan(batch);
  first.forgive(tp);
  const next = new DeliveryPlanner(store, 'g', 5);
  await next.plan(batch);
  assert.equal(next.deliveries({ topic: 't', partition: 0, offset: 10 }), 2);
});
