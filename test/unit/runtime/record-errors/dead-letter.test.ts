import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  deadLetterOf,
  DLT_HEADERS,
  DLT_TRUNCATION_HEADERS,
  fitDeadLetter,
  recordBytes,
  type DeadLetterInfo,
} from '../../../../src/runtime/record-errors/dead-letter.ts';
import { failureKind } from '../../../../src/runtime/record-errors/policy.ts';
import type { StageRecord } from '../../../../src/runtime/stage.ts';

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

  it('leaves a dead letter that fits unchanged and says nothing about truncation', () => {
    const d = deadLetterOf(record, 'dlt', info);
    assert.equal(d.value, record.value);
    assert.equal(DLT_TRUNCATION_HEADERS.truncated in d.headers!, false);
  });

  it('cuts the value of a dead letter over the limit to fit, and says so with the original size', () => {
    const big = { ...record, value: Buffer.alloc(1_048_000, 'v') };
    const d = deadLetterOf(big, 'dlt', info);
    assert.ok(recordBytes(d) <= 1_000_000, `dead letter is ${recordBytes(d)} bytes`);
    assert.ok(recordBytes(d) > 999_000, 'only as much as needed is cut');
    const h = d.headers!;
    assert.equal(h[DLT_TRUNCATION_HEADERS.truncated], 'value');
    assert.equal(h[DLT_TRUNCATION_HEADERS.valueBytes], '1048000');
    assert.match(String(h[DLT_HEADERS.errorMessage]), /unexpected token/);
    assert.deepEqual(h.trace, Buffer.from('abc'));
  });

  it('cuts the stack and message headers after the value, to the configured limit', () => {
    const error = new ParseError('m'.repeat(3_000));
    const d = deadLetterOf({ ...record, value: Buffer.alloc(500, 'x') }, 'dlt', {
      ...info,
      error,
      maxBytes: 1_500,
    });
    const h = d.headers!;
    assert.ok(recordBytes(d) <= 1_500, `dead letter is ${recordBytes(d)} bytes`);
    assert.equal((d.value as Buffer).length, 0);
    assert.equal(h[DLT_TRUNCATION_HEADERS.truncated], 'value,stack,message');
    assert.equal(h[DLT_HEADERS.errorStack], '');
    assert.match(String(h[DLT_HEADERS.errorMessage]), /^m+$/);
    assert.equal(h[DLT_TRUNCATION_HEADERS.valueBytes], '500');
  });

  it('drops copied original headers last, keeping its own headers and the key', () => {
    const headers = { huge: Buffer.alloc(5_000), trace: Buffer.from('abc') };
    const d = fitDeadLetter(deadLetterOf({ ...record, headers }, 'dlt', info), 2_000);
    assert.ok(recordBytes(d) <= 2_000);
    assert.equal('huge' in d.headers!, false);
    assert.equal(d.key, record.key);
    assert.equal(d.headers![DLT_HEADERS.offset], '1234');
    assert.match(String(d.headers![DLT_TRUNCATION_HEADERS.truncated]), /headers$/);
  });

  it('does not split a multi-byte character when it cuts a string value', () => {
    const d = fitDeadLetter({ topic: 'dlt', value: 'ü'.repeat(1_000) }, 1_000);
    assert.ok(recordBytes(d) <= 1_000);
    assert.match(String(d.value), /^ü+$/);
  });
});

describe('failureKind', () => {
  it('is the error kind, never the class name (the class goes to error.class)', () => {
    assert.equal(failureKind(new TypeError('x')), 'processing');
    assert.equal(failureKind(Object.assign(new Error('x'), { kind: 'validation' })), 'validation');
    assert.equal(failureKind('thrown text'), 'processing');
    const h = deadLetterOf(record, 'dlt', { ...info, errorKind: failureKind(new TypeError('x')) }).headers!;
    assert.equal(h[DLT_HEADERS.errorKind], 'processing');
    assert.equal(h[DLT_HEADERS.errorClass], 'ParseError');
  });
});
