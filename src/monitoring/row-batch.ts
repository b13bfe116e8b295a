import type { StageOutput } from '../runtime/stage.ts';
import { monitoringRow, monitoringTopic, MONITORING_TOPIC_PREFIX, type EventSource } from './events.ts';
import type { RowInput, TableName } from './tables.ts';

/**
 * Most bytes of one batched monitoring record: far below Kafka's default `message.max.bytes` (1 MB),
 * because a refused record carrying the rows of a whole call could not be traced to one input.
 */
export const MAX_ROWS_RECORD_BYTES = 256 * 1024;

/**
 * The monitoring rows of one `process` (or timer) call, gathered per table and produced as few
 * records as fit: each record's value is a JSON array of rows, each row with its own identity
 * (source position and index), so the agent writes exactly the rows one record per row would have
 * written. One record per table and call instead of one per row is what keeps a line's monitoring
 * from costing several Kafka records in every stage's transaction.
 *
 * Indexes are numbered per (table, source) in the order rows are added, so that a replay of the same
 * records in the same order numbers them alike; {@link add} takes an explicit index for stages that
 * fix it per status.
 */
export class MonitoringRowBatch {
  readonly #rows = new Map<TableName, string[]>();
  readonly #next = new Map<string, number>();

  constructor(private readonly prefix = MONITORING_TOPIC_PREFIX) {}

  /** Adds a row numbered after the rows already added for this table and source. */
  emit<T extends TableName>(table: T, source: EventSource, row: RowInput<T>): void {
    const key = `${table}\u0000${source.topic}\u0000${source.partition}\u0000${source.offset}`;
    const index = this.#next.get(key) ?? 0;
    this.#next.set(key, index + 1);
    this.add(table, source, index, row);
  }

  /**
   * Adds a row with the given index.
   * @throws {@link MonitoringRowError} when the row does not fit its table (a bug in the stage).
   */
  add<T extends TableName>(table: T, source: EventSource, index: number, row: RowInput<T>): void {
    const json = JSON.stringify(monitoringRow(table, source, index, row));
    const list = this.#rows.get(table);
    if (list) list.push(json);
    else this.#rows.set(table, [json]);
  }

  get size(): number {
    let n = 0;
    for (const list of this.#rows.values()) n += list.length;
    return n;
  }

  /** The gathered rows as records (each at most {@link MAX_ROWS_RECORD_BYTES}), then forgets them. */
  outputs(maxBytes = MAX_ROWS_RECORD_BYTES): StageOutput[] {
    const out: StageOutput[] = [];
    for (const [table, rows] of this.#rows) {
      const topic = monitoringTopic(table, this.prefix);
      let part: string[] = [];
      let bytes = 2;
      for (const row of rows) {
        const size = Buffer.byteLength(row) + 1;
        if (part.length > 0 && bytes + size > maxBytes) {
          out.push({ topic, key: null, value: `[${part.join(',')}]` });
          part = [];
          bytes = 2;
        }
        part.push(row);
        bytes += size;
      }
      if (part.length > 0) out.push({ topic, key: null, value: `[${part.join(',')}]` });
    }
    this.#rows.clear();
    this.#next.clear();
    return out;
  }
}
