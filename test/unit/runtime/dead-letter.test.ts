import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deadLetterOf, DLT_HEADERS, type DeadLetterInfo } from '../../../src/runtime/dead-letter.ts';
import type { StageRecord } from '../../../src/runtime/stage.ts';

const record: StageRecord = {
  topic: 'pipeline-logserver_in',
  partition: 4,
  offset: 1234,
  key: Buffer.from('client-17'),
  value: Buffer.from('{"domain":"x"}'),
  headers: { trace: Buffer.from('abc') },
  timestamp: 1_700_000_000_000,
};

class ParseError extends Error {
  override readonly name = 'ParseError';
}

const info: DeadLetterInfo = {
  group: 'data_analysis.detector',
  stage: 'data_analysis.detector',
  errorKind: 'record',
  error: new ParseError('unexpected token'),
  attempts: 3,
  firstFailure: Date.UTC(2025, 0, 1, 0, 0, 0),
  lastFailure: Date.UTC(2025, 0, 1, 0, 0, 5),
};

describe('deadLetterOf', () => {
  it('keeps key and value unchanged and goes to the dead-letter topic', () => {
    const d = deadLetterOf(record, 'pipeline-logserver_in.DLT', info);
    assert.equal(d.topic, 'pipeline-logserver_in.DLT');
    assert.equal(d.key, record.key);
    assert.equal(d.value, record.value);
  });

  it('records where the record came from, who failed it, why, and when', () => {
    const h = deadLetterOf(record, 'dlt', info).headers!;
    assert.equal(h[DLT_HEADERS.topic], 'pipeline-logserver_in');
    assert.equal(h[DLT_HEADERS.partition], '4');
    assert.equal(h[DLT_HEADERS.offset], '1234');
    assert.equal(h[DLT_HEADERS.timestamp], '1700000000000');
    assert.equal(h[DLT_HEADERS.group], 'data_analysis.detector');
    assert.equal(h[DLT_HEADERS.stage], 'data_analysis.detector');
    assert.equal(h[DLT_HEADERS.errorKind], 'record');
    assert.equal(h[DLT_HEADERS.errorClass], 'ParseError');
    assert.equal(h[DLT_HEADERS.errorMessage], 'unexpected token');
    assert.match(String(h[DLT_HEADERS.errorStack]), /^ParseError: unexpected token/);
    assert.equal(h[DLT_HEADERS.attempts], '3');
    assert.equal(h[DLT_HEADERS.firstFailure], '2025-01-01T00:00:00.000Z');
    assert.equal(h[DLT_HEADERS.lastFailure], '2025-01-01T00:00:05.000Z');
    assert.deepEqual(h[DLT_HEADERS.key], record.key);
  });

  it('keeps the original headers', () => {
    const h = deadLetterOf(record, 'dlt', info).headers!;
    assert.deepEqual(h.trace, Buffer.from('abc'));
  });

  it('omits the key header for a record without key and an empty timestamp when unknown', () => {
    const h = deadLetterOf({ ...record, key: null, timestamp: undefined }, 'dlt', info).headers!;
    assert.equal(DLT_HEADERS.key in h, false);
    assert.equal(h[DLT_HEADERS.timestamp], '');
  });

  it('describes a thrown non-Error as an Error with its text', () => {
    const h = deadLetterOf(record, 'dlt', { ...info, error: 'bad input' }).headers!;
    assert.equal(h[DLT_HEADERS.errorClass], 'Error');
    assert.equal(h[DLT_HEADERS.errorMessage], 'bad input');
  });

  it('truncates the stack to 2000 characters', () => {
    const error = new Error('deep');
    error.stack = 'x'.repeat(10_000);
    const h = deadLetterOf(record, 'dlt', { ...info, error }).headers!;
    assert.equal(String(h[DLT_HEADERS.errorStack]).length, 2_000);
  });

  it('uses header names under the hamstring.dlt. prefix that replay reads back', () => {
    for (const name of Object.values(DLT_HEADERS)) assert.match(name, /^hamstring\.dlt\./);
    assert.equal(new Set(Object.values(DLT_HEADERS)).size, Object.values(DLT_HEADERS).length);
  });
});
