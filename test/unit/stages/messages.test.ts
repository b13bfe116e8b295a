import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stableId } from '../../../src/stages/ids.ts';
import {
  batchSchema,
  decodeAlert,
  decodeBatch,
  encodeAlert,
  encodeBatch,
  isoFromMicros,
  timestampMicros,
  wellFormedBatch,
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

test('a batch the hand check passes is one the schema accepts, unchanged; anything else goes to the schema', () => {
  const one = {
    logline_id: 'l',
    subnet_id: '10.0.0.0_24',
    ts: '2026-11-30T00:00:00.000001Z',
    src_ip: '10.0.0.1',
    domain_name: 'a.example',
  };
  const batch = {
    batch_tree_row_id: 't',
    batch_id: 'b',
    begin_timestamp: one.ts,
    end_timestamp: one.ts,
    data: [one],
  };
  const variants: unknown[] = [
    batch,
    { ...batch, context_logline_ids: ['l'] },
    { ...batch, context_logline_ids: [1] },
    { ...batch, extra: 1 },
    { ...batch, batch_id: 5 },
    { ...batch, data: {} },
    { ...batch, data: [[]] },
    ...['2026-02-30T00:00:00Z', '2026-11-30T00:00:00', '2026-11-30 00:00:00Z', '2024-02-29T23:59:59.5Z'].map(
      (ts) => ({ ...batch, data: [{ ...one, ts }] }),
    ),
    ...(['logline_id', 'subnet_id', 'src_ip', 'ts'] as const).map((field) => ({
      ...batch,
      data: [{ ...one, [field]: null }],
    })),
    null,
    [],
    JSON.parse('{"__proto__": {}, "batch_id": "b"}'),
  ];
  let certain = 0;
  for (const variant of variants) {
    const parsed = batchSchema.safeParse(variant);
    if (!wellFormedBatch(variant)) continue;
    certain += 1;
    assert.ok(parsed.success, `hand check passed what the schema refuses: ${JSON.stringify(variant)}`);
    assert.deepEqual(parsed.data, variant);
  }
  assert.equal(certain, 3, 'the plain batch, one with context ids, one with a leap day');
  assert.throws(() => decodeBatch(JSON.stringify({ ...batch, data: [{ ...one, ts: 'x' }] })), /data\.0\.ts/);
});
