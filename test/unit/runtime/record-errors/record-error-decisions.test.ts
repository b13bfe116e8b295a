import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchedRecord } from '../../../../src/kafka/records.ts';
import { fixedBackOff } from '../../../../src/runtime/backoff.ts';
import { DeadLetterLimit } from '../../../../src/runtime/record-errors/dead-letter-limit.ts';
import { deliveriesOf, nextMarker } from '../../../../src/runtime/delivery-attempts/next-marker.ts';
import {
  defaultRecordErrorPolicy,
  errorKindOf,
  isRetryable,
} from '../../../../src/runtime/record-errors/policy.ts';
import {
  asOriginal,
  dueAt,
  forwardToRetry,
  RETRY_HEADERS,
} from '../../../../src/runtime/record-errors/retry-topics.ts';
import { DecodeError, NonRetryableError } from '../../../../src/runtime/stage.ts';
import { fetchedRecord } from '../../../support/fetched-record.ts';

const rec = fetchedRecord;
const policy = { ...defaultRecordErrorPolicy, backOff: fixedBackOff(1_000, 2) };

describe('error kinds', () => {
  test('decode errors are never retried; a stage predicate decides the rest', () => {
    assert.equal(
      isRetryable(new DecodeError('x'), policy, () => true),
      false,
      'decode is never retried',
    );
    assert.equal(isRetryable(new NonRetryableError('x'), policy), false);
    assert.equal(
      isRetryable(new Error('x'), policy, () => false),
      false,
    );
    assert.equal(isRetryable(new Error('x'), policy), true);
    assert.equal(errorKindOf(Object.assign(new Error('x'), { kind: 'validation' })), 'validation');
  });
});

describe('retry topics', () => {
  test('with retry topics a failure is forwarded to its next hop, then dead-lettered under its origin', () => {
    const rt = { ...policy, retryTopics: { delaysMs: [100, 200] } };
    const hop = forwardToRetry(rec(0, 5), rt.retryTopics, new Error('x'), 1_000)!;
    assert.equal(hop.topic, 't-retry-1');
    const hopRecord: FetchedRecord = {
      ...rec(0, 0),
      topic: 't-retry-1',
      headers: Object.fromEntries(Object.entries(hop.headers!).map(([k, v]) => [k, Buffer.from(v)])),
    };
    assert.equal(dueAt(hopRecord), 1_100);
    const second = forwardToRetry(hopRecord, rt.retryTopics, new Error('y'), 2_000)!;
    assert.equal(second.topic, 't-retry-2');
    const last: FetchedRecord = {
      ...rec(0, 0),
      topic: 't-retry-2',
      headers: Object.fromEntries(Object.entries(second.headers!).map(([k, v]) => [k, Buffer.from(v)])),
    };
    assert.equal(forwardToRetry(last, rt.retryTopics, new Error('z'), 3_000), undefined);
    const original = asOriginal(last);
    assert.deepEqual([original.topic, original.partition, original.offset], ['t', 0, 5]);
    assert.ok(!(RETRY_HEADERS.attempt in original.headers));
  });
});

describe('delivery markers (bounded redelivery)', () => {
  test('a new batch start counts 1, a redelivery of the same start counts up', () => {
    assert.deepEqual(nextMarker(undefined, 10, 19, 3), {
      marker: { offset: 10, count: 1, batchEnds: [19] },
      action: 'normal',
    });
    assert.deepEqual(nextMarker({ offset: 10, count: 2, batchEnds: [19, 18] }, 10, 19, 3), {
      marker: { offset: 10, count: 3, batchEnds: [19, 18, 19] },
      action: 'normal',
    });
    assert.deepEqual(nextMarker({ offset: 10, count: 2, batchEnds: [19, 18] }, 20, 29, 3), {
      marker: { offset: 20, count: 1, batchEnds: [29] },
      action: 'normal',
    });
  });

  test('too many deliveries of one start search the range one record at a time, then dead-letter the culprit', () => {
    const search = nextMarker({ offset: 10, count: 3 }, 10, 19, 3);
    assert.deepEqual(search, {
      marker: { offset: 10, count: 1, suspectEnd: 19, batchEnds: [] },
      action: 'single',
    });
    assert.deepEqual(nextMarker(search.marker, 11, 19, 3).action, 'single');
    assert.deepEqual(nextMarker({ offset: 14, count: 3, suspectEnd: 19 }, 14, 19, 3).action, 'poison');
    assert.deepEqual(nextMarker({ offset: 19, count: 1, suspectEnd: 19 }, 20, 29, 3).action, 'normal');
  });
});

describe("delivery count of a poison record (the dead letter's attempts)", () => {
  test('counts the failed batch deliveries that reached the record and its deliveries alone', () => {
    // Three batch deliveries from offset 10 (ending at 19, 16, 19), then a search, one record at a time.
    let m = nextMarker(undefined, 10, 19, 3).marker;
    m = nextMarker(m, 10, 16, 3).marker;
    m = nextMarker(m, 10, 19, 3).marker;
    let step = nextMarker(m, 10, 19, 3);
    assert.equal(step.action, 'single');
    for (const offset of [11, 12, 13, 14, 15, 16, 17]) step = nextMarker(step.marker, offset, 19, 3);
    for (let i = 0; i < 3; i += 1) step = nextMarker(step.marker, 17, 19, 3);
    assert.equal(step.action, 'poison');
    assert.equal(
      deliveriesOf(step.marker, 17),
      2 + 3,
      'two batches reached 17 (not the one ending at 16), three alone',
    );
  });

  test('a record poisoned at the start of the search counts every batch delivery', () => {
    let step = nextMarker(undefined, 10, 19, 2);
    for (let i = 0; i < 4; i += 1) step = nextMarker(step.marker, 10, 19, 2);
    assert.equal(step.action, 'poison');
    assert.equal(deliveriesOf(step.marker, 10), 4);
  });
});

describe('dead-letter limit', () => {
  test('check answers for a batch without counting it; record counts it', () => {
    const limit = new DeadLetterLimit({ maxShare: 1, window: 100, maxConsecutive: 2 });
    assert.match(limit.check([true, true]) ?? '', /2 consecutive/);
    assert.equal(limit.check([true]), undefined, 'the checked batch was not counted');
    assert.equal(limit.record([true]), undefined);
    assert.match(limit.check([true]) ?? '', /2 consecutive/);
  });

  test('trips on consecutive dead letters', () => {
    const limit = new DeadLetterLimit({ maxShare: 1, window: 100, maxConsecutive: 3 });
    assert.equal(limit.record([true, true, false, true, true]), undefined);
    assert.match(limit.record([true]) ?? '', /3 consecutive/);
  });

  test('trips on a share only after half a window', () => {
    const limit = new DeadLetterLimit({ maxShare: 0.5, window: 10, maxConsecutive: 100 });
    assert.equal(limit.record([true, true, true, false]), undefined);
    assert.match(limit.record([true]) ?? '', /80% of the last 5/);
  });
});
