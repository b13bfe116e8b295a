import type { StageOutput } from '../runtime/stage.ts';
import { monitoringRowJson, monitoringTopic, MONITORING_TOPIC_PREFIX, type EventSource } from './events.ts';
import type { RowInput, TableName } from './tables.ts';

/**
 * Most bytes of one batched monitoring record: far below Kafka's default `message.max.bytes` (1 MB),
 * because a refused record carrying the rows of a whole call could not be traced to one input.
 */
export const MAX_ROWS_RECORD_BYTES = 256 * 1024;

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

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
 * One table's rows as record values (JSON arrays), written as UTF-8 while they are added: joining the
 * rows' texts and encoding the whole at the end cost more than making the rows.
 */
class TableRecords {
  readonly values: Buffer[] = [];
  #buffer: Buffer = spareBuffers.pop() ?? Buffer.allocUnsafe(FIRST_BUFFER_BYTES);
  #used = 0;
  #rows = 0;

  constructor(private readonly maxBytes: number) {}

  push(json: string): void {
    // A UTF-16 code unit is at most three UTF-8 bytes: the exact size is needed only near the bound.
    let bytes = json.length * 3;
    if (this.#rows > 0 && this.#used + bytes + 2 > this.maxBytes) {
      bytes = Buffer.byteLength(json);
      if (this.#used + bytes + 2 > this.maxBytes) this.#close();
    }
    this.#reserve(bytes + 2);
    this.#buffer[this.#used++] = this.#rows === 0 ? OPEN : COMMA;
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
    this.#buffer[this.#used++] = CLOSE;
    const value = Buffer.allocUnsafe(this.#used);
    this.#buffer.copy(value, 0, 0, this.#used);
    this.values.push(value);
    this.#used = 0;
    this.#rows = 0;
  }

  /** Room for `bytes` more and the closing bracket. */
  #reserve(bytes: number): void {
    if (this.#used + bytes + 1 <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#used + bytes + 1));
    this.#buffer.copy(grown, 0, 0, this.#used);
    this.#buffer = grown;
  }
}

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
  readonly #tables = new Map<TableName, TableRecords>();
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
    const json = monitoringRowJson(table, source, index, row);
    let records = this.#tables.get(table);
    if (!records) {
      records = new TableRecords(this.maxBytes);
      this.#tables.set(table, records);
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
    for (const [table, records] of this.#tables) {
      records.finish();
      const topic = monitoringTopic(table, this.prefix);
      for (const value of records.values) out.push({ topic, key: null, value });
    }
    this.#tables.clear();
    this.#next.clear();
    this.#size = 0;
    return out;
  }
}
