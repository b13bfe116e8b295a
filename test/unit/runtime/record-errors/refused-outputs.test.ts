import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError } from '../../../../src/kafka/classify.ts';
import { code } from '../../../../src/kafka/error-codes.ts';
import type { FetchedRecord } from '../../../../src/kafka/records.ts';
import { isRetryable } from '../../../../src/runtime/record-errors/policy.ts';
import {
  attributeRefused,
  RefusedOutputs,
  type Produced,
} from '../../../../src/runtime/record-errors/refused-outputs.ts';

const rec = (offset: number): FetchedRecord => ({
  topic: 'in',
  partition: 0,
  offset,
  key: null,
  value: Buffer.from(String(offset)),
  headers: {},
  timestamp: 0,
});

const refusedAt = (index: number) =>
  classifyKafkaError(
    { code: code('MSG_SIZE_TOO_LARGE'), message: 'Broker: Message size too large' },
    'delivery',
  ).about({ topic: 'out', partition: 0, index, bytes: 2_000_000 }, `record ${index}`);

describe('attributeRefused', () => {
  const records = [rec(10), rec(11), rec(12)];
  const produced: Produced[] = [
    { output: { topic: 'out', value: 'a' }, source: records[0]! },
    { output: { topic: 'out', value: 'big' }, source: records[1]! },
    { output: { topic: 'out', value: 'big too' }, source: records[1]! },
    { output: { topic: 'out', value: 'anonymous' } },
  ];

  it('names the input record of each refused output, once per input record', () => {
    const { failures, unattributed } = attributeRefused([refusedAt(1), refusedAt(2)], produced, records);
    assert.equal(unattributed.length, 0);
    assert.equal(failures.length, 1);
    assert.equal(failures[0]!.record, records[1]);
    assert.equal((failures[0]!.error as { kind: string }).kind, 'refused');
  });

  it('leaves an output without a source unattributed in a batch of several records', () => {
    const { failures, unattributed } = attributeRefused([refusedAt(3)], produced, records);
    assert.equal(failures.length, 0);
    assert.equal(unattributed.length, 1);
  });

  it('attributes an output without a source to the only record of a one-record batch', () => {
    const { failures } = attributeRefused(
      [refusedAt(0)],
      [{ output: { topic: 'out', value: 'x' } }],
      [rec(7)],
    );
    assert.equal(failures[0]!.record.offset, 7);
  });

  it('a refused record is never retried: the same bytes get the same answer', () => {
    assert.equal(isRetryable(refusedAt(0), { nonRetryableKinds: [] }), false);
    const e = new RefusedOutputs([{ record: rec(1), error: refusedAt(0) }], []);
    assert.match(e.message, /Kafka refused 1 produced record\(s\): .*record 0/);
  });
});
