import assert from 'node:assert/strict';
import { test } from 'node:test';
import { monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import { MonitoringRowError } from '../../../src/monitoring/events.ts';
import { MonitoringRowBatch } from '../../../src/monitoring/row-batch.ts';
import { RowDecoder } from '../../../src/monitoring/clickhouse-sink.ts';
import { TABLES } from '../../../src/monitoring/tables.ts';
import type { StageRecord } from '../../../src/runtime/stage.ts';

const at = (offset: number) => ({ topic: 'in', partition: 1, offset });
const link = (n: number) => ({ logline_id: `l${n}`, batch_id: 'b' });

/** The rows of a record value, expanded as the agent reads them. */
function rowsOf(value: unknown): unknown[] {
  return monitoringRowsOfJson(JSON.parse(String(value))) ?? [];
}

function asRecords(outputs: ReturnType<MonitoringRowBatch['outputs']>): StageRecord[] {
  return outputs.map((o, offset) => ({
    topic: o.topic,
    partition: 0,
    offset,
    key: null,
    value: Buffer.from(String(o.value)),
    headers: {},
    timestamp: 0,
  }));
}

test('rows of a call become one record per table, and the agent reads back exactly those rows', () => {
  const rows = new MonitoringRowBatch();
  rows.emit('logline_to_batches', at(3), link(1));
  rows.emit('logline_to_batches', at(3), link(2));
  rows.emit('logline_to_batches', at(4), link(3));
  rows.add('server_logs', at(4), 0, { message_id: 'm', timestamp_in: 1, message_text: 't' });
  const outputs = rows.outputs();
  assert.deepEqual(
    outputs.map((o) => o.topic),
    ['clickhouse_logline_to_batches', 'clickhouse_server_logs'],
  );
  const { byTable, rejected } = new RowDecoder(TABLES, 'clickhouse_').decode(asRecords(outputs));
  assert.deepEqual(rejected, []);
  assert.deepEqual(
    byTable.get('logline_to_batches')?.map((r) => [r.row.src_offset, r.row.row_index, r.row.logline_id]),
    [
      [3, 0, 'l1'],
      [3, 1, 'l2'],
      [4, 0, 'l3'],
    ],
  );
  assert.equal(byTable.get('server_logs')?.length, 1);
  assert.deepEqual(rows.outputs(), [], 'outputs() forgets what it produced');
});

test('a table with more rows than fit one record is split, every row in exactly one record', () => {
  const rows = new MonitoringRowBatch(undefined, 4096);
  for (let n = 0; n < 500; n += 1) rows.emit('logline_to_batches', at(n), link(n));
  const outputs = rows.outputs();
  assert.ok(outputs.length > 1);
  assert.ok(outputs.every((o) => Buffer.byteLength(String(o.value)) <= 4096));
  const offsets = outputs.flatMap((o) =>
    (rowsOf(o.value) as { src_offset: number }[]).map((r) => r.src_offset),
  );
  assert.deepEqual(
    offsets,
    Array.from({ length: 500 }, (_, n) => n),
  );
});

test('a row that does not fit its table is refused when added', () => {
  const rows = new MonitoringRowBatch();
  assert.throws(
    () => rows.add('logline_to_batches', at(1), 0, { logline_id: 'l' } as never),
    MonitoringRowError,
  );
});

test('records stay within the bound with multi-byte rows, a row larger than the bound goes alone, and no row is lost', () => {
  for (const bound of [300, 1000, 4096]) {
    const rows = new MonitoringRowBatch(undefined, bound);
    const texts = Array.from(
      { length: 300 },
      (_, n) => 'ü€'.repeat(n % 37) + (n === 150 ? 'x'.repeat(2 * bound) : ''),
    );
    texts.forEach((text, n) =>
      rows.add('server_logs', at(n), 0, { message_id: `m${n}`, timestamp_in: n, message_text: text }),
    );
    const outputs = rows.outputs();
    for (const o of outputs) {
      const bytes = (o.value as Buffer).length;
      const count = rowsOf(o.value).length;
      assert.ok(
        bytes <= bound || count === 1,
        `a record of ${count} rows takes ${bytes} bytes, over ${bound}`,
      );
    }
    const back = outputs.flatMap((o) => rowsOf(o.value) as { message_text: string }[]);
    assert.deepEqual(
      back.map((r) => r.message_text),
      texts,
    );
  }
});

test("a call's records keep their bytes when later calls write into the buffers it gave back", () => {
  const first = new MonitoringRowBatch();
  for (let n = 0; n < 200; n += 1) first.emit('logline_to_batches', at(n), link(n));
  const kept = first.outputs();
  const before = kept.map((o) => Buffer.from(o.value as Buffer).toString('utf8'));
  for (let call = 0; call < 5; call += 1) {
    const later = new MonitoringRowBatch();
    for (let n = 0; n < 300; n += 1)
      later.emit('logline_to_batches', at(1_000 + n), { logline_id: 'x', batch_id: 'y' });
    later.emit('server_logs', at(7), { message_id: 'm', timestamp_in: 1, message_text: 'é'.repeat(5_000) });
    later.outputs();
  }
  assert.deepEqual(
    kept.map((o) => (o.value as Buffer).toString('utf8')),
    before,
  );
  const rows = rowsOf(before[0]!) as { logline_id: string }[];
  assert.equal(rows.length, 200);
  assert.equal(rows[199]!.logline_id, 'l199');
});
