import type { StageOutput, StageRecord } from '../runtime/stage.ts';
import { fastRowJson } from './row-check.ts';
import { TABLES, tableRowSchema, type RowInput, type TableName } from './tables.ts';
import { HamstringError } from '../errors/hamstring-error.ts';

/** Topics the agent consumes are `<prefix><table>`; the reference's prefix is `clickhouse_`. */
export const MONITORING_TOPIC_PREFIX = 'clickhouse_';

export function monitoringTopic(table: TableName, prefix = MONITORING_TOPIC_PREFIX): string {
  return `${prefix}${table}`;
}

/** The record a monitoring row is about: the input record of the stage that emits the row. */
export type EventSource = Pick<StageRecord, 'topic' | 'partition' | 'offset'>;

/** A stage tried to emit a row that does not fit its table: a bug in the stage, not bad input. */
export class MonitoringRowError extends HamstringError {
  override readonly name = 'MonitoringRowError';
  readonly code = 'MONITORING_ROW_INVALID';
}

/**
 * A monitoring row as an output of the stage's own transaction: it reaches `clickhouse_<table>`
 * exactly when the stage's other outputs and input offsets commit. Its identity is the source
 * record's position plus `index` (the row's number among the rows this source record produced for
 * this table), so a replay of the source yields the same identity and the agent's ReplacingMergeTree
 * collapses the duplicate. Never a random id: a random id makes a replayed row a new row.
 *
 * @throws {@link MonitoringRowError} when the row does not fit the table's schema.
 */
export function monitoringEvent<T extends TableName>(
  table: T,
  source: EventSource,
  index: number,
  row: RowInput<T>,
  prefix = MONITORING_TOPIC_PREFIX,
): StageOutput {
  return {
    topic: monitoringTopic(table, prefix),
    key: null,
    value: monitoringRowJson(table, source, index, row),
  };
}

const FAST_JSON = new Map(TABLES.map((t) => [t.name, fastRowJson(t)]));

/**
 * {@link monitoringRow} as JSON text: what a monitoring record carries per row.
 *
 * @throws {@link MonitoringRowError} when the row does not fit the table's schema.
 */
export function monitoringRowJson<T extends TableName>(
  table: T,
  source: EventSource,
  index: number,
  row: RowInput<T>,
): string {
  return (
    FAST_JSON.get(table)?.(source, index, row) ?? JSON.stringify(monitoringRow(table, source, index, row))
  );
}

/**
 * A row with its identity, checked against its table: what one monitoring record carries, or one
 * element of a batched record's array (see `MonitoringRowBatch`).
 *
 * @throws {@link MonitoringRowError} when the row does not fit the table's schema.
 */
export function monitoringRow<T extends TableName>(
  table: T,
  source: EventSource,
  index: number,
  row: RowInput<T>,
): Record<string, unknown> {
  const candidate = {
    src_topic: source.topic,
    src_partition: source.partition,
    src_offset: source.offset,
    row_index: index,
    ...row,
  };
  const parsed = tableRowSchema(table).safeParse(candidate);
  if (!parsed.success) {
    throw new MonitoringRowError(
      `${table} row does not fit the table: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}
