import { MonitoringEvents } from '../monitoring/events.ts';
import type { RowInput, TableName } from '../monitoring/tables.ts';
import type { RecordPosition, StageOutput } from '../runtime/index.ts';

/** Appends one monitoring row about `source` to `outputs`, attributed to `source`. */
export type EmitRow = <T extends TableName>(table: T, row: RowInput<T>) => void;

/**
 * Monitoring rows of one `process` call: numbered per source record and table (so a replay of the
 * same records numbers them the same), each output attributed to its source record so that a
 * failing record costs only the records after it.
 */
export class CallRows {
  readonly #events: MonitoringEvents;

  constructor(
    private readonly outputs: StageOutput[],
    prefix?: string,
  ) {
    this.#events = new MonitoringEvents(prefix);
  }

  about(source: RecordPosition): EmitRow {
    return (table, row) => {
      this.outputs.push({ ...this.#events.emit(table, source, row), source });
    };
  }
}
