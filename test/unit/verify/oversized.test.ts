import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkDeadLetters,
  checkOutput,
  deadLettersHold,
  isExactlyOnce,
  type SeenRecord,
} from '../../../src/verify/check.ts';
import {
  OVERSIZED_TOPIC_MAX_BYTES,
  oversizedBytes,
  oversizedValue,
  poisonSeqs,
} from '../../../src/verify/oversized.ts';

const PRODUCER_MESSAGE_MAX_BYTES = 1_000_000;

const rec = (partition: number, offset: number, seq: number, errorKind?: string): SeenRecord => ({
  partition,
  offset,
  key: `k-${seq % 2}`,
  seq,
  attempts: [],
  ...(errorKind !== undefined ? { errorKind } : {}),
});

describe('verify: the oversized-output schedule', () => {
  test('every n-th sequence is poison, alternately past the topic limit and past the producer limit', () => {
    const every = { every: 5 };
    assert.deepEqual([...poisonSeqs(21, every)], [0, 5, 10, 15, 20]);
    const sizes = [0, 5, 10, 15].map((seq) => oversizedBytes(seq, every)!);
    for (const [i, bytes] of sizes.entries()) {
      assert.ok(bytes > OVERSIZED_TOPIC_MAX_BYTES, `${bytes} past the topic's max.message.bytes`);
      if (i % 2 === 0) assert.ok(bytes < PRODUCER_MESSAGE_MAX_BYTES, 'refused by the broker, not the client');
      else assert.ok(bytes > PRODUCER_MESSAGE_MAX_BYTES, 'refused by the client');
    }
    assert.equal(oversizedBytes(7, every), undefined);
    assert.equal(poisonSeqs(100, { every: 0 }).size, 0);
  });

  test('an oversized value has the requested size and reads back as its sequence number', () => {
    const v = oversizedValue(997, 300_000);
    assert.equal(v.length, 300_000);
    assert.equal(Number(v.toString()), 997);
  });
});

describe('verify: the checks of a run with dead-lettered records', () => {
  test('the output may lack exactly the dead-lettered sequences; one of them in the output is unexpected', () => {
    const clean = checkOutput([rec(0, 0, 0), rec(0, 1, 2), rec(1, 0, 3)], 4, new Set(), new Set([1]));
    assert.ok(isExactlyOnce(clean), JSON.stringify(clean));
    const leaked = checkOutput(
      [rec(0, 0, 0), rec(0, 1, 1), rec(0, 2, 2), rec(1, 0, 3)],
      4,
      new Set(),
      new Set([1]),
    );
    assert.equal(leaked.unexpected, 1);
    assert.equal(isExactlyOnce(leaked), false);
    const lost = checkOutput([rec(0, 0, 0), rec(1, 0, 3)], 4, new Set(), new Set([1]));
    assert.deepEqual(lost.samples.lost, [2]);
  });

  test('each poison record dead-lettered once for a refusal holds; a re-read position is not a duplicate', () => {
    const v = checkDeadLetters(
      [rec(0, 0, 0, 'refused'), rec(1, 0, 5, 'refused'), rec(1, 0, 5, 'refused')],
      new Set([0, 5]),
    );
    assert.equal(v.received, 2);
    assert.ok(deadLettersHold(v), JSON.stringify(v));
  });

  test('a duplicate, a missing, a foreign and a wrongly classified dead letter are each counted', () => {
    const v = checkDeadLetters(
      [
        rec(0, 0, 0, 'refused'),
        rec(0, 1, 0, 'refused'),
        rec(1, 0, 7, 'refused'),
        rec(1, 1, 10, 'validation'),
      ],
      new Set([0, 5, 10]),
    );
    assert.deepEqual(
      { duplicates: v.duplicates, missing: v.missing, foreign: v.foreign, wrongKind: v.wrongKind },
      { duplicates: 1, missing: 1, foreign: 1, wrongKind: 1 },
    );
    assert.deepEqual(v.samples.missing, [5]);
    assert.deepEqual(v.samples.foreign, [7]);
    assert.deepEqual(v.samples.wrongKind, ['10:validation']);
    assert.equal(deadLettersHold(v), false);
  });
});
