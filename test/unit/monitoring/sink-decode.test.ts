import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RowDecoder, chunks, isDataError } from '../../../src/monitoring/clickhouse-sink.ts';
import { parseVersion, supportsDeduplicationToken } from '../../../src/monitoring/clickhouse-connection.ts';
import { TABLES } from '../../../src/monitoring/tables.ts';
import type { StageRecord } from '../../../src/runtime/stage.ts';

function rec(topic: string, offset: number, value: unknown): StageRecord {
  return {
    topic,
    partition: 0,
    offset,
    key: null,
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    headers: {},
    timestamp: 0,
  };
}

const good = (offset: number) => ({
  src_topic: 'in',
  src_partition: 0,
  src_offset: offset,
  row_index: 0,
  logline_id: `l${offset}`,
  batch_id: 'b',
});

describe('sink decoding', () => {
  test('valid rows are grouped per table in order; every malformed kind is rejected with its reason', () => {
    const d = new RowDecoder(TABLES, 'clickhouse_');
    const { byTable, rejected } = d.decode([
      rec('clickhouse_logline_to_batches', 0, good(0)),
      rec('clickhouse_nope', 1, good(1)),
      rec('clickhouse_logline_to_batches', 2, '{not json'),
      rec('clickhouse_logline_to_batches', 3, { ...good(3), batch_id: undefined }),
      rec('clickhouse_logline_to_batches', 4, { ...good(4), src_offset: 'four' }),
      rec('clickhouse_logline_to_batches', 5, good(5)),
    ]);
    assert.deepEqual(
      byTable.get('logline_to_batches')?.map((r) => r.record.offset),
      [0, 5],
    );
    assert.deepEqual(
      rejected.map((r) => [r.record.offset, r.reason]),
      [
        [1, 'unknown-table'],
        [2, 'bad-json'],
        [3, 'schema'],
        [4, 'schema'],
      ],
    );
    assert.match(rejected[2]!.error.message, /batch_id/);
  });

  test('a record carrying an array yields each row; a row that does not fit is rejected alone, as its own record', () => {
    const d = new RowDecoder(TABLES, 'clickhouse_');
    const { byTable, rejected } = d.decode([
      rec('clickhouse_logline_to_batches', 7, [good(1), { ...good(2), batch_id: undefined }, good(3)]),
      rec('clickhouse_logline_to_batches', 8, good(4)),
      rec('clickhouse_logline_to_batches', 9, []),
    ]);
    assert.deepEqual(
      byTable.get('logline_to_batches')?.map((r) => [r.record.offset, r.row.src_offset]),
      [
        [7, 1],
        [7, 3],
        [8, 4],
      ],
    );
    assert.deepEqual(
      rejected.map((r) => [r.record.offset, r.reason]),
      [[7, 'schema']],
    );
    const { batch_id: _dropped, ...withoutBatch } = good(2);
    assert.deepEqual(JSON.parse(rejected[0]!.record.value!.toString()), withoutBatch);
  });

  test('the decoder subscribes one topic per table under the prefix', () => {
    assert.equal(new RowDecoder(TABLES, 'x_').topics.length, 13);
    assert.ok(new RowDecoder(TABLES, 'x_').topics.includes('x_batch_tree'));
  });

  test('chunks of the insert batch size, the last one partial', () => {
    assert.deepEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  });

  test('only parse and type errors count as data errors; anything else means ClickHouse is unavailable', () => {
    assert.equal(isDataError({ code: '27' }), true);
    assert.equal(isDataError({ code: '241' }), false);
    assert.equal(isDataError(new Error('ECONNREFUSED')), false);
  });

  test('insert_deduplication_token is used from ClickHouse 22.2 on, never on 18.16', () => {
    assert.equal(supportsDeduplicationToken(parseVersion('18.16.1')), false);
    assert.equal(supportsDeduplicationToken(parseVersion('22.1.3.7')), false);
    assert.equal(supportsDeduplicationToken(parseVersion('22.2.1')), true);
    assert.equal(supportsDeduplicationToken(parseVersion('24.8.4.13')), true);
  });
});
