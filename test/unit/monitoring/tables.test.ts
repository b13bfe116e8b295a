import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TABLES,
  TABLE_NAMES,
  addColumnSql,
  createDedupViewSql,
  createTableSql,
  diffColumns,
  tableDef,
  tableRowSchema,
} from '../../../src/monitoring/tables.ts';
import { monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import { MonitoringRowError, monitoringEvent } from '../../../src/monitoring/events.ts';
import { MonitoringRowBatch } from '../../../src/monitoring/row-batch.ts';

const identity = { src_topic: 'in', src_partition: 2, src_offset: 41, row_index: 0 };

describe('monitoring table schemas', () => {
  test('there are the twelve HAMSTRING tables plus worker_batches, each starting with the identity columns', () => {
    assert.equal(TABLE_NAMES.length, 13);
    for (const t of TABLES)
      assert.deepEqual(
        t.columns.slice(0, 4).map((c) => c.name),
        ['src_topic', 'src_partition', 'src_offset', 'row_index'],
      );
  });

  test('a complete row validates; timestamps become epoch ms and flags 0/1', () => {
    const parsed = tableRowSchema('logline_timestamps').parse({
      ...identity,
      logline_id: 'l-1',
      stage: 'log_collection.collector',
      status: 'in_process',
      timestamp: '2026-01-02T03:04:05.678Z',
      is_active: true,
    });
    assert.equal(parsed.timestamp, Date.parse('2026-01-02T03:04:05.678Z'));
    assert.equal(parsed.is_active, 1);
  });

  test('a nullable column may be omitted and becomes null', () => {
    const parsed = tableRowSchema('failed_loglines').parse({
      ...identity,
      message_text: 'x',
      timestamp_in: 1,
      timestamp_failed: 2,
    });
    assert.equal(parsed.reason_for_failure, null);
  });

  test('a missing column, a wrong type, an unknown column or a bad timestamp is rejected', () => {
    const s = tableRowSchema('server_logs');
    const ok = { ...identity, message_id: 'm', timestamp_in: 5, message_text: 't' };
    assert.equal(s.safeParse(ok).success, true);
    const { message_text: _drop, ...missing } = ok;
    assert.equal(s.safeParse(missing).success, false);
    assert.equal(s.safeParse({ ...ok, timestamp_in: 'yesterday-ish' }).success, false);
    assert.equal(s.safeParse({ ...ok, src_offset: '41' }).success, false);
    assert.equal(s.safeParse({ ...ok, extra: 1 }).success, false);
    assert.equal(s.safeParse({ ...ok, src_partition: 2 ** 31 }).success, false);
  });
});

describe('monitoring DDL', () => {
  test('CREATE TABLE is idempotent ReplacingMergeTree ordered by the identity, with 18.16 types only', () => {
    const sql = createTableSql('mon', tableDef('batch_tree'));
    assert.match(sql, /^CREATE TABLE IF NOT EXISTS `mon`\.`batch_tree`/);
    assert.match(
      sql,
      /ENGINE = ReplacingMergeTree\nORDER BY \(`src_topic`, `src_partition`, `src_offset`, `row_index`\)$/,
    );
    assert.match(sql, /`src_offset` Int64/);
    assert.match(sql, /`parent_batch_row_id` Nullable\(String\)/);
    assert.doesNotMatch(sql, /DateTime64|Bool|LowCardinality|UUID/);
  });

  test('the dedup view reads the table with FINAL', () => {
    assert.equal(
      createDedupViewSql('mon', tableDef('alerts')),
      'CREATE VIEW IF NOT EXISTS `mon`.`alerts_dedup` AS SELECT * FROM `mon`.`alerts` FINAL',
    );
  });

  test('evolution adds exactly the missing columns and reports type differences', () => {
    const t = tableDef('fill_levels');
    const existing = t.columns
      .filter((c) => c.name !== 'entry_count')
      .map((c) => ({
        name: c.name,
        type: c.name === 'stage' ? 'Nullable(String)' : c.kind === 'timestamp' ? 'Int64' : c.kind,
      }));
    const diff = diffColumns(t, existing);
    assert.deepEqual(
      diff.missing.map((c) => c.name),
      ['entry_count'],
    );
    assert.deepEqual(diff.mismatched, [{ name: 'stage', expected: 'String', actual: 'Nullable(String)' }]);
    assert.equal(
      addColumnSql('mon', 'fill_levels', diff.missing[0]!),
      'ALTER TABLE `mon`.`fill_levels` ADD COLUMN `entry_count` UInt64',
    );
  });

  test('identifiers are checked, so no SQL can be smuggled in through a name', () => {
    assert.throws(() => createTableSql('mon`; DROP', tableDef('alerts')), /invalid ClickHouse identifier/);
  });
});

describe('monitoring events', () => {
  test('an event carries the identity of its source record and goes to clickhouse_<table>', () => {
    const out = monitoringEvent('server_logs', { topic: 'in', partition: 2, offset: 41 }, 0, {
      message_id: 'm',
      timestamp_in: 5,
      message_text: 't',
    });
    assert.equal(out.topic, 'clickhouse_server_logs');
    assert.deepEqual(JSON.parse(String(out.value)), {
      ...identity,
      message_id: 'm',
      timestamp_in: 5,
      message_text: 't',
    });
  });

  test('the same source emitted twice in a process() call gets indices 0 and 1, the same on a replay', () => {
    const run = () => {
      const rows = new MonitoringRowBatch();
      const src = { topic: 'in', partition: 0, offset: 7 };
      rows.emit('logline_to_batches', src, { logline_id: 'a', batch_id: 'b' });
      rows.emit('logline_to_batches', src, { logline_id: 'c', batch_id: 'b' });
      rows.emit('loglines', src, {
        logline_id: 'a',
        subnet_id: 's',
        timestamp: 1,
        status: 'in_process',
        client_ip: '1.2.3.4',
        record_type: 'A',
      });
      return rows
        .outputs()
        .flatMap((o) =>
          (monitoringRowsOfJson(JSON.parse(String(o.value))) as { row_index: number }[]).map(
            (r) => r.row_index,
          ),
        );
    };
    assert.deepEqual(run(), [0, 1, 0]);
    assert.deepEqual(run(), run());
  });

  test('a row that does not fit its table is a stage bug and throws', () => {
    assert.throws(
      () =>
        monitoringEvent('alerts', { topic: 'in', partition: 0, offset: 1 }, 0, {
          client_ip: '1.2.3.4',
          alert_timestamp: 'not a time',
          suspicious_batch_id: 's',
          overall_score: 0.9,
          domain_names: '[]',
          result: '[]',
        }),
      MonitoringRowError,
    );
  });
});
