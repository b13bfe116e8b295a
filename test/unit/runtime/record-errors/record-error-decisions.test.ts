import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchedRecord } from '../../../../src/kafka/records.ts';
import { fixedBackOff } from '../../../../src/runtime/backoff.ts';
import { DeadLetterLimit } from '../../../../src/runtime/record-errors/dead-letter-limit.ts';
import { nextMarker } from '../../../../src/runtime/delivery-attempts/next-marker.ts';
import { FailureTracker } from '../../../../src/runtime/record-errors/failure-tracker.ts';
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
import { planSettlement } from '../../../../src/runtime/record-errors/settlement-plan.ts';
import { DecodeError, NonRetryableError } from '../../../../src/runtime/stage.ts';

const rec = (partition: number, offset: number, headers: Record<string, Buffer> = {}): FetchedRecord => ({
  topic: 't',
  partition,
  offset,
  key: null,
  value: Buffer.from(String(offset)),
  headers,
  timestamp: 0,
});
const policy = { ...defaultRecordErrorPolicy, backOff: fixedBackOff(1_000, 2) };

describe('settlement of a processed batch', () => {
  const records = [rec(0, 0), rec(0, 1), rec(0, 2), rec(1, 0), rec(1, 1)];
  const outputs = records.map((r) => ({ topic: 'o', value: r.value, source: r }));

  test('a retryable failure holds back its record and the rest of its partition; other partitions commit', () => {
    const s = planSettlement({
      records,
      outputs: outputs.filter((o) => !(o.source.partition === 0 && o.source.offset === 1)),
      failures: [{ record: rec(0, 1), error: new Error('x') }],
      poison: [],
      policy,
      tracker: new FailureTracker(),
      now: 0,
    });
    assert.deepEqual(
      s.keep.map((r) => `${r.partition}@${r.offset}`),
      ['0@0', '1@0', '1@1'],
    );
    assert.deepEqual(s.retries, [
      {
        partition: { topic: 't', partition: 0 },
        offset: 1,
        delayMs: 1_000,
        attempt: 1,
        error: new Error('x'),
      },
    ]);
    assert.equal(s.outputs?.length, 3, 'outputs of held-back records are dropped');
  });

  test('outputs without a source cannot be picked apart: the rest must be processed again', () => {
    const s = planSettlement({
      records,
      outputs: [{ topic: 'o', value: 'x' }],
      failures: [{ record: rec(1, 1), error: new Error('x') }],
      poison: [],
      policy,
      tracker: new FailureTracker(),
      now: 0,
    });
    assert.equal(s.outputs, undefined);
  });

  test('after the last attempt a failure is dead-lettered with its history and its offset commits', () => {
    const tracker = new FailureTracker();
    tracker.fail(rec(0, 2), 10);
    tracker.fail(rec(0, 2), 20);
    const s = planSettlement({
      records,
      outputs: [],
      failures: [{ record: rec(0, 2), error: new Error('x') }],
      poison: [],
      policy,
      tracker,
      now: 30,
    });
    assert.equal(s.retries.length, 0);
    assert.equal(s.keep.length, records.length);
    assert.deepEqual(s.deadLetters[0]!.history, { attempts: 3, firstFailure: 10, lastFailure: 30 });
  });

  test('non-retryable and decode errors are dead-lettered at once; a stage predicate overrides', () => {
    const tracker = new FailureTracker();
    const s = planSettlement({
      records,
      outputs: [],
      failures: [
        { record: rec(0, 0), error: new DecodeError('bad') },
        { record: rec(1, 0), error: new NonRetryableError('no') },
      ],
      poison: [],
      policy,
      tracker,
      now: 0,
    });
    assert.deepEqual(
      s.deadLetters.map((d) => d.kind),
      ['decode', 'non-retryable'],
    );
    assert.equal(
      isRetryable(new DecodeError('x'), policy, () => true),
      false,
      'decode is never retried',
    );
    assert.equal(
      isRetryable(new Error('x'), policy, () => false),
      false,
    );
    assert.equal(errorKindOf(Object.assign(new Error('x'), { kind: 'validation' })), 'validation');
  });

  test('with retry topics a failure is forwarded to its next hop, then dead-lettered under its origin', () => {
    const rt = { ...policy, retryTopics: { delaysMs: [100, 200] } };
    const first = planSettlement({
      records: [rec(0, 5)],
      outputs: [],
      failures: [{ record: rec(0, 5), error: new Error('x') }],
      poison: [],
      policy: rt,
      tracker: new FailureTracker(),
      now: 1_000,
    });
    const hop = first.forwards[0]!;
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
      marker: { offset: 10, count: 1 },
      action: 'normal',
    });
    assert.deepEqual(nextMarker({ offset: 10, count: 2 }, 10, 19, 3), {
      marker: { offset: 10, count: 3 },
      action: 'normal',
    });
    assert.deepEqual(nextMarker({ offset: 10, count: 2 }, 20, 29, 3), {
      marker: { offset: 20, count: 1 },
      action: 'normal',
    });
  });

  test('too many deliveries of one start search the range one record at a time, then dead-letter the culprit', () => {
    const search = nextMarker({ offset: 10, count: 3 }, 10, 19, 3);
    assert.deepEqual(search, { marker: { offset: 10, count: 1, suspectEnd: 19 }, action: 'single' });
    assert.deepEqual(nextMarker(search.marker, 11, 19, 3).action, 'single');
    assert.deepEqual(nextMarker({ offset: 14, count: 3, suspectEnd: 19 }, 14, 19, 3).action, 'poison');
    assert.deepEqual(nextMarker({ offset: 19, count: 1, suspectEnd: 19 }, 20, 29, 3).action, 'normal');
  });
});

describe('dead-letter limit', () => {
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
