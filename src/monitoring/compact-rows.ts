/**
 * The compact form of a monitoring record, which stages write for the rows of their `process` calls:
 *
 *   {"src_topic":"<topic>","src_partition":<p>,"columns":["<c1>",...,"<cn>"],"rows":[[<offset>,<index>,<v1>,...,<vn>],...]}
 *
 * One record holds rows of one table about records of one source partition, so the source topic and
 * partition and the column names are written once per record instead of in every row: with them in
 * every row, the monitoring topics carried about seven times the bytes of the lines they describe.
 * The agent expands each row to the object a one-row record carries (`{src_topic, src_partition,
 * src_offset, row_index, c1, ..., cn}`) and checks it against its table as before; the column names
 * come from the record, so an agent whose table gained a Nullable column reads older records.
 */

/** What a record's rows start with: the header up to the opening bracket of `rows`. */
export function compactRowsHeader(topic: string, partition: number, columns: readonly string[]): string {
  return `{"src_topic":${JSON.stringify(topic)},"src_partition":${partition},"columns":${JSON.stringify(columns)},"rows":[`;
}

/** What closes a record after its last row. */
export const COMPACT_ROWS_END = ']}';

interface CompactRows {
  readonly src_topic: unknown;
  readonly src_partition: unknown;
  readonly columns: readonly string[];
  readonly rows: readonly unknown[];
}

function isCompact(value: object): value is CompactRows {
  const v = value as Partial<CompactRows>;
  return Array.isArray(v.rows) && Array.isArray(v.columns) && v.columns.every((c) => typeof c === 'string');
}

/**
 * The rows a monitoring record's parsed JSON carries: a row object (a one-row record), an array of
 * row objects, or the compact form expanded; undefined when it is none of these. An element of the
 * compact form that is not an array of the header's length is returned as it is, so the table's
 * check refuses that row alone and names it.
 */
export function monitoringRowsOfJson(parsed: unknown): unknown[] | undefined {
  if (Array.isArray(parsed)) return parsed as unknown[];
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  if (!isCompact(parsed)) return [parsed];
  const { src_topic, src_partition, columns, rows } = parsed;
  return rows.map((values: unknown): unknown => {
    if (!Array.isArray(values) || values.length !== columns.length + 2) return values;
    const at = values as unknown[];
    // fromEntries defines own properties: a column named __proto__ cannot reach the prototype.
    return Object.fromEntries([
      ['src_topic', src_topic],
      ['src_partition', src_partition],
      ['src_offset', at[0]],
      ['row_index', at[1]],
      ...columns.map((name, i) => [name, at[i + 2]]),
    ]);
  });
}
