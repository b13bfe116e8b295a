import { MonitoringRowBatch } from '../monitoring/row-batch.ts';
import type { RowInput, TableName } from '../monitoring/tables.ts';
import type { RecordPosition, StageOutput } from '../runtime/index.ts';

/** Adds one monitoring row about a source record to the call's rows. */
export type EmitRow = <T extends TableName>(table: T, row: RowInput<T>) => void;

/**
 * Monitoring rows of one `process` call: numbered per source record and table (so a replay of the
 * same records numbers them the same) and produced by {@link flush} as one record per table (see
 * `MonitoringRowBatch`), not one per row.
 */
export class CallRows {
  readonly #rows: MonitoringRowBatch;

  constructor(prefix?: string) {
    this.#rows = new MonitoringRowBatch(prefix);
  }

  about(source: RecordPosition): EmitRow {
    return (table, row) => this.#rows.emit(table, source, row);
  }

  /** Appends the gathered rows' records to `outputs`. */
  flush(outputs: StageOutput[]): void {
    outputs.push(...this.#rows.outputs());
  }
}
