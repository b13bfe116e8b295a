import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RowDecoder } from '../../../src/monitoring/clickhouse-sink.ts';
import { compactRowsHeader, monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import { monitoringRow } from '../../../src/monitoring/events.ts';
import { MonitoringRowBatch } from '../../../src/monitoring/row-batch.ts';
import { TABLES } from '../../../src/monitoring/tables.ts';
import type { StageRecord } from '../../../src/runtime/stage.ts';

const TOPIC = 'pipeline-logserver_to_collector-dga_collector';

function records(values: readonly (Buffer | string)[], topic: string): StageRecord[] {
  return values.map((value, offset) => ({
    topic,
    partition: 0,
    offset,
    key: null,
    value: Buffer.from(value),
    headers: {},
    timestamp: 0,
  }));
}

const timestamps = (offset: number, stage: string) => ({
  logline_id: `line-${offset}`,
  stage,
  status: 'in_process',
  timestamp: 1_796_300_000_000 + offset,
  is_active: true,
});

test('compact records carry the rows one object per row would, in under half the bytes', () => {
  const rows = new MonitoringRowBatch();
  const expected: Record<string, unknown>[] = [];
  for (let offset = 0; offset < 400; offset += 1)
    for (const stage of ['log_collection.collector', 'log_collection.batch_handler']) {
      const source = { topic: TOPIC, partition: 2, offset };
      rows.emit('logline_timestamps', source, timestamps(offset, stage));
      expected.push(
        monitoringRow(
          'logline_timestamps',
          source,
          stage.endsWith('collector') ? 0 : 1,
          timestamps(offset, stage),
        ),
      );
    }
  const outputs = rows.outputs();
  const back = outputs.flatMap((o) => monitoringRowsOfJson(JSON.parse(String(o.value))) ?? []);
  assert.deepEqual(back, expected);
  const compact = outputs.reduce((n, o) => n + (o.value as Buffer).length, 0);
  const objects = Buffer.byteLength(JSON.stringify(expected));
  assert.ok(compact < objects / 2, `compact ${compact} bytes against ${objects} as row objects`);
});

test('rows about two source partitions go to records of their own, each expanding to its own source', () => {
  const rows = new MonitoringRowBatch();
  rows.emit(
    'logline_to_batches',
    { topic: TOPIC, partition: 0, offset: 7 },
    { logline_id: 'a', batch_id: 'b' },
  );
  rows.emit(
    'logline_to_batches',
    { topic: TOPIC, partition: 1, offset: 7 },
    { logline_id: 'c', batch_id: 'b' },
  );
  rows.emit(
    'logline_to_batches',
    { topic: TOPIC, partition: 0, offset: 8 },
    { logline_id: 'd', batch_id: 'b' },
  );
  const outputs = rows.outputs();
  assert.equal(outputs.length, 2);
  const { byTable, rejected } = new RowDecoder(TABLES, 'clickhouse_').decode(
    records(
      outputs.map((o) => o.value as Buffer),
      'clickhouse_logline_to_batches',
    ),
  );
  assert.deepEqual(rejected, []);
  assert.deepEqual(
    byTable.get('logline_to_batches')?.map((r) => [r.row.src_partition, r.row.src_offset, r.row.logline_id]),
    [
      [0, 7, 'a'],
      [0, 8, 'd'],
      [1, 7, 'c'],
    ],
  );
});

test('a row the fast writer cannot take goes through the schema and reads back as the schema outputs it', () => {
  const rows = new MonitoringRowBatch();
  const source = { topic: TOPIC, partition: 0, offset: 3 };
  const row = { ...timestamps(3, 'log_collection.collector'), timestamp: '2026-12-01T10:00:00.250Z' };
  rows.add('logline_timestamps', source, 0, row);
  const [output] = rows.outputs();
  assert.deepEqual(monitoringRowsOfJson(JSON.parse(String(output?.value))), [
    monitoringRow('logline_timestamps', source, 0, row as never),
  ]);
});

test('the agent refuses a compact row of the wrong length alone, names it, and keeps its siblings', () => {
  const header = compactRowsHeader(TOPIC, 0, ['logline_id', 'batch_id']);
  const value = `${header}[1,0,"a","b"],[2,0,"c"],[3,0,"d","e"]]}`;
  const { byTable, rejected } = new RowDecoder(TABLES, 'clickhouse_').decode(
    records([value], 'clickhouse_logline_to_batches'),
  );
  assert.deepEqual(
    byTable.get('logline_to_batches')?.map((r) => r.row.logline_id),
    ['a', 'd'],
  );
  assert.equal(rejected.length, 1);
  assert.equal(rejected[0]?.reason, 'schema');
  assert.equal(rejected[0]?.record.value?.toString(), '[2,0,"c"]', 'the dead letter holds the one row');
});

test('a column named __proto__ in a record becomes a field of the row, never its prototype', () => {
  const [row] = monitoringRowsOfJson({
    src_topic: 't',
    src_partition: 0,
    columns: ['__proto__'],
    rows: [[1, 0, { polluted: true }]],
  }) as Record<string, unknown>[];
  assert.ok(Object.hasOwn(row!, '__proto__'));
  assert.equal((row as { polluted?: unknown }).polluted, undefined);
});
