import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stableId } from '../../../src/stages/ids.ts';
import {
  decodeAlert,
  decodeBatch,
  encodeAlert,
  encodeBatch,
  isoFromMicros,
  timestampMicros,
} from '../../../src/stages/messages.ts';
import { batch, line } from './batches.ts';

test('a Batch survives encoding and decoding; extra line fields pass through', () => {
  const input = batch([line('a', 1, { extra: { nested: true } })], ['a']);
  assert.deepEqual(decodeBatch(encodeBatch(input)), input);
  assert.deepEqual(decodeBatch(Buffer.from(encodeBatch(input))), input);
});

test('what is not a Batch or an Alert is a DecodeError naming the problem', () => {
  const cases: [() => unknown, RegExp][] = [
    [() => decodeBatch(null), /^Batch: empty record value$/],
    [() => decodeBatch('{'), /^Batch: not JSON$/],
    [() => decodeBatch(JSON.stringify({ ...batch([line('a', 1)]), extra: 1 })), /^Batch: : Unrecognized key/],
    [() => decodeBatch(JSON.stringify(batch([{ ...line('a', 1), ts: 'today' }]))), /^Batch: data\.0\.ts: /],
    [() => decodeAlert('{"overall_score": "high"}'), /^Alert: overall_score: /],
  ];
  for (const [decode, message] of cases) {
    assert.throws(decode, (error: Error) => error.name === 'DecodeError' && message.test(error.message));
  }
});

test('an Alert survives encoding and decoding', () => {
  const alert = {
    overall_score: 0.9,
    result: [{ request: line('a', 1), probability: 0.9, name: 'dga_detector' }],
    src_ip: '10.2.54.7',
    alert_timestamp: '2026-11-30T00:00:05.000Z',
    suspicious_batch_id: 'sb',
    detector_name: 'dga_detector',
  };
  assert.deepEqual(decodeAlert(encodeAlert(alert)), alert);
});

test('timestamps keep microseconds both ways; fewer fraction digits read as a prefix', () => {
  const micros = Date.parse('2026-11-30T12:34:56Z') * 1000 + 7;
  assert.equal(isoFromMicros(micros), '2026-11-30T12:34:56.000007Z');
  assert.equal(timestampMicros('2026-11-30T12:34:56.000007Z'), micros);
  assert.equal(timestampMicros('2026-11-30T12:34:56.5Z'), micros - 7 + 500_000);
  assert.equal(timestampMicros('2026-11-30T12:34:56Z'), micros - 7);
});

test('stable ids are UUID-shaped, equal for equal parts and different when a part moves', () => {
  const id = stableId('logline', 'topic', 0, 5);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(stableId('logline', 'topic', 0, 5), id);
  assert.notEqual(stableId('logline', 'topic', 0, 6), id);
  assert.notEqual(stableId('logline', 'topic0', 5), stableId('logline', 'topic', 0, 5));
});

test('a stable id never changes between versions: a replay after an upgrade must find the same ids', () => {
  assert.equal(stableId('logline', 't', 1, 2), '702793d5-1601-830f-b299-53e7e64c0da9');
  assert.equal(stableId('x'), 'b12744e4-0c61-8e9d-a060-b385c9f136ca');
});
