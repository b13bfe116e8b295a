import type { StageOutput } from '../runtime/stage.ts';
import { COMPACT_ROWS_END, compactRowsHeader } from './compact-rows.ts';
import {
  monitoringRow,
  monitoringTopic,
  MonitoringRowError,
  MONITORING_TOPIC_PREFIX,
  type EventSource,
} from './events.ts';
import { fastRowValues, payloadColumnNames } from './row-check.ts';
import { TABLES, type RowInput, type TableName } from './tables.ts';

/**
 * Most bytes of one batched monitoring record: far below Kafka's default `message.max.bytes` (1 MB),
 * because a refused record carrying the rows of a whole call could not be traced to one input.
 */
export const MAX_ROWS_RECORD_BYTES = 256 * 1024;

const COMMA = 0x2c;

/** Size of a new write buffer; it doubles while a record needs more. */
const FIRST_BUFFER_BYTES = 16_384;
/**
 * Write buffers of finished calls, taken up by later ones. A record is copied out at its exact size,
 * so a buffer grown once serves every later call: a call growing its own from 16 KB allocated about
 * twice its records' bytes in ArrayBuffers and copied them on every doubling.
 */
const spareBuffers: Buffer[] = [];
const MAX_SPARE_BUFFERS = 16;

/**
 * Rows of one table about one source partition as record values in the compact form
 * (compact-rows.ts), written as UTF-8 while they are added: joining the rows' texts and encoding the
 * whole at the end cost more than making the rows.
 */
class TableRecords {
  readonly values: Buffer[] = [];
  #buffer: Buffer = spareBuffers.pop() ?? Buffer.allocUnsafe(FIRST_BUFFER_BYTES);
  #used = 0;
  #rows = 0;

  constructor(
    readonly table: TableName,
    /** The source partition the rows are about. */
    readonly topic: string,
    readonly partition: number,
    private readonly header: string,
    private readonly maxBytes: number,
  ) {}

  push(json: string): void {
    // A UTF-16 code unit is at most three UTF-8 bytes: the exact size is needed only near the bound.
    let bytes = json.length * 3;
    if (this.#rows > 0 && this.#used + bytes + END_BYTES + 1 > this.maxBytes) {
      bytes = Buffer.byteLength(json);
      if (this.#used + bytes + END_BYTES + 1 > this.maxBytes) this.#close();
    }
    if (this.#rows === 0) {
      this.#reserve(this.header.length * 3 + bytes);
      this.#used += this.#buffer.write(this.header, this.#used);
    } else {
      this.#reserve(bytes + 1);
      this.#buffer[this.#used++] = COMMA;
    }
    this.#used += this.#buffer.write(json, this.#used);
    this.#rows += 1;
  }

  /** Closes the record being written, if any, and gives the write buffer to later calls. */
  finish(): void {
    if (this.#rows > 0) this.#close();
    if (spareBuffers.length < MAX_SPARE_BUFFERS && this.#buffer.length <= 2 * this.maxBytes)
      spareBuffers.push(this.#buffer);
    this.#buffer = Buffer.alloc(0);
  }

  #close(): void {
    this.#used += this.#buffer.write(COMPACT_ROWS_END, this.#used);
    const value = Buffer.allocUnsafe(this.#used);
    this.#buffer.copy(value, 0, 0, this.#used);
    this.values.push(value);
    this.#used = 0;
    this.#rows = 0;
  }

  /** Room for `bytes` more and the closing brackets. */
  #reserve(bytes: number): void {
    if (this.#used + bytes + END_BYTES <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#used + bytes + END_BYTES));
    this.#buffer.copy(grown, 0, 0, this.#used);
    this.#buffer = grown;
  }
}

const END_BYTES = COMPACT_ROWS_END.length;

/** Per table: its payload columns and the compact writer of a row that needs no schema. */
const WRITERS = new Map(
  TABLES.map((t) => [t.name, { columns: payloadColumnNames(t), fast: fastRowValues(t) }]),
);

/**
 * `[offset,index,v1,...]` of a row, through the table's schema when the fast writer cannot take it.
 * @throws {@link MonitoringRowError} when the row does not fit its table.
 */
function compactRow<T extends TableName>(
  table: T,
  source: EventSource,
  index: number,
  row: RowInput<T>,
): string {
  const writer = WRITERS.get(table);
  if (!writer) throw new MonitoringRowError(`no monitoring table ${table}`);
  const fast = writer.fast(source.offset, index, row);
  if (fast !== undefined) return fast;
  const checked = monitoringRow(table, source, index, row);
  const values = [checked.src_offset, checked.row_index, ...writer.columns.map((c) => checked[c] ?? null)];
  return JSON.stringify(values);
}

/**
 * The monitoring rows of one `process` (or timer) call, gathered per table and source partition and
 * produced as few records as fit, in the compact form (compact-rows.ts): each row keeps its own
 * identity (source position and index), so the agent writes exactly the rows one record per row
 * would have written. One record per table and call instead of one per row is what keeps a line's
 * monitoring from costing several Kafka records in every stage's transaction.
 *
 * Indexes are numbered per (table, source) in the order rows are added, so that a replay of the same
 * records in the same order numbers them alike; {@link add} takes an explicit index for stages that
 * fix it per status.
 */
export class MonitoringRowBatch {
  /** Per table and source partition, in the order they were first added to. */
  readonly #records: TableRecords[] = [];
  /**
   * Per table, its records' source partitions. A few per call, so a scan comparing the topic finds
   * one: a key string per row (`table NUL topic NUL partition`) cost about a microsecond a row.
   */
  readonly #byTable = new Map<TableName, TableRecords[]>();
  readonly #next = new Map<string, number>();
  #size = 0;

  /** `maxBytes`: most bytes of one record (a single larger row goes alone). */
  constructor(
    private readonly prefix = MONITORING_TOPIC_PREFIX,
    private readonly maxBytes = MAX_ROWS_RECORD_BYTES,
  ) {}

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
    const json = compactRow(table, source, index, row);
    let ofTable = this.#byTable.get(table);
    if (!ofTable) {
      ofTable = [];
      this.#byTable.set(table, ofTable);
    }
    let records: TableRecords | undefined;
    for (const candidate of ofTable)
      if (candidate.partition === source.partition && candidate.topic === source.topic) {
        records = candidate;
        break;
      }
    if (!records) {
      if (!Number.isInteger(source.partition) || Math.abs(source.partition) >= 2 ** 31)
        throw new MonitoringRowError(`${table} row: source partition ${source.partition} is not an Int32`);
      const columns = WRITERS.get(table)?.columns ?? [];
      const header = compactRowsHeader(source.topic, source.partition, columns);
      records = new TableRecords(table, source.topic, source.partition, header, this.maxBytes);
      ofTable.push(records);
      this.#records.push(records);
    }
    records.push(json);
    this.#size += 1;
  }

  get size(): number {
    return this.#size;
  }

  /** The gathered rows as records (each at most the bound), then forgets them. */
  outputs(): StageOutput[] {
    const out: StageOutput[] = [];
    for (const records of this.#records) {
      records.finish();
      const topic = monitoringTopic(records.table, this.prefix);
      for (const value of records.values) out.push({ topic, key: null, value });
    }
    this.#records.length = 0;
    this.#byTable.clear();
    this.#next.clear();
    this.#size = 0;
    return out;
  }
}
