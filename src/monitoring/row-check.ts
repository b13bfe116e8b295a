import { IDENTITY_KEY, type ColumnKind, type TableDef } from './tables.ts';

/**
 * The JSON of one column value when it already has its normal form, else undefined: an ISO timestamp
 * string, a wrong type or an out-of-range number is left to the table's zod schema, which transforms
 * it or explains why it does not fit. The same row either way, at a fraction of the cost.
 */
type ColumnJson = (value: unknown) => string | undefined;

/** The input record a row is about (its identity, with the row's index). */
interface RowSource {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

const INT32 = 2 ** 31;

const integerIn =
  (min: number, max: number): ColumnJson =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? String(v) : undefined;

function columnJson(kind: ColumnKind): ColumnJson {
  switch (kind) {
    case 'String':
      return (v) => (typeof v === 'string' ? JSON.stringify(v) : undefined);
    case 'Nullable(String)':
      return (v) =>
        v === undefined || v === null ? 'null' : typeof v === 'string' ? JSON.stringify(v) : undefined;
    case 'Int32':
      return integerIn(-INT32, INT32 - 1);
    case 'Int64':
      return integerIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    case 'UInt8':
      return integerIn(0, 255);
    case 'UInt32':
      return integerIn(0, 2 ** 32 - 1);
    case 'UInt64':
    case 'timestamp':
      return integerIn(0, Number.MAX_SAFE_INTEGER);
    case 'Float64':
      return (v) => (Number.isFinite(v) ? JSON.stringify(v) : undefined);
    case 'flag':
      return (v) => (v === true || v === 1 ? '1' : v === false || v === 0 ? '0' : undefined);
  }
}

interface PayloadColumn {
  readonly name: string;
  /** `,"name":` */
  readonly prefix: string;
  readonly json: ColumnJson;
}

/** The table's columns besides the identity, in the table's order. */
function payloadColumns(table: TableDef): PayloadColumn[] {
  const identity = new Set(IDENTITY_KEY);
  return table.columns
    .filter((col) => !identity.has(col.name))
    .map((col) => ({ name: col.name, prefix: `,${JSON.stringify(col.name)}:`, json: columnJson(col.kind) }));
}

/** Names of the table's columns besides the identity, in the order {@link fastRowValues} writes them. */
export function payloadColumnNames(table: TableDef): string[] {
  return payloadColumns(table).map((col) => col.name);
}

const partitionJson = integerIn(-INT32, INT32 - 1);
const offsetJson = integerIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
const indexJson = integerIn(0, 2 ** 32 - 1);

/**
 * A writer of a table's rows as JSON for the common case: every payload column present with its
 * normal value (a Nullable column may be missing), no other key. It returns the text of the row
 * with its identity, as `JSON.stringify` of the table's zod output would give it, or undefined when
 * the row needs the schema. Stages write several rows per line: an identity object, zod and a
 * generic `JSON.stringify` per row were a tenth of a busy collector.
 */
export function fastRowJson(
  table: TableDef,
): (source: RowSource, index: number, row: Record<string, unknown>) => string | undefined {
  const payload = payloadColumns(table);
  const names = new Set(payload.map((col) => col.name));
  let topic = '';
  let topicJson = '""';
  return (source, index, row) => {
    if (typeof source.topic !== 'string') return undefined;
    // Rows of one call mostly share their source topic: its JSON is made once.
    if (source.topic !== topic) {
      topic = source.topic;
      topicJson = JSON.stringify(topic);
    }
    const partition = partitionJson(source.partition);
    const offset = offsetJson(source.offset);
    const number = indexJson(index);
    if (partition === undefined || offset === undefined || number === undefined) return undefined;
    let text = `{"src_topic":${topicJson},"src_partition":${partition},"src_offset":${offset},"row_index":${number}`;
    for (const col of payload) {
      const value = col.json(row[col.name]);
      if (value === undefined) return undefined;
      text += col.prefix + value;
    }
    for (const key in row) if (!names.has(key)) return undefined;
    return `${text}}`;
  };
}

/**
 * The compact form of {@link fastRowJson}: `[offset,index,v1,...,vn]`, the payload values in
 * {@link payloadColumnNames}' order (a missing Nullable one as null), or undefined when the row
 * needs the schema. Its source topic and partition are its record's (see compact-rows.ts).
 */
export function fastRowValues(
  table: TableDef,
): (offset: number, index: number, row: Record<string, unknown>) => string | undefined {
  const payload = payloadColumns(table);
  const names = new Set(payload.map((col) => col.name));
  return (offset, index, row) => {
    const at = offsetJson(offset);
    const number = indexJson(index);
    if (at === undefined || number === undefined) return undefined;
    let text = `[${at},${number}`;
    for (const col of payload) {
      const value = col.json(row[col.name]);
      if (value === undefined) return undefined;
      text += `,${value}`;
    }
    for (const key in row) if (!names.has(key)) return undefined;
    return `${text}]`;
  };
}
