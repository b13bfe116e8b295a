import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fastRowJson } from '../../../src/monitoring/row-check.ts';
import { TABLES, tableRowSchema, type ColumnKind } from '../../../src/monitoring/tables.ts';

/** Values at and beyond each kind's edges, of the right type and of wrong ones. */
const PROBES: readonly unknown[] = [
  '',
  'text',
  '2026-01-02T03:04:05.678Z',
  'not a time',
  null,
  undefined,
  true,
  false,
  0,
  1,
  2,
  -1,
  1.5,
  255,
  256,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 32 - 1,
  2 ** 32,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_SAFE_INTEGER,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  {},
];

/** A value of each kind that both paths accept, to vary one column at a time against. */
const NORMAL: Record<ColumnKind, unknown> = {
  String: 's',
  'Nullable(String)': 'n',
  Int32: 3,
  Int64: 4,
  UInt8: 5,
  UInt32: 6,
  UInt64: 7,
  Float64: 0.5,
  timestamp: 1_700_000_000_000,
  flag: 1,
};

const IDENTITY = new Set(['src_topic', 'src_partition', 'src_offset', 'row_index']);

test('the fast row writer takes only rows the zod schema accepts, and writes exactly what zod outputs', () => {
  let fast = 0;
  for (const table of TABLES) {
    const write = fastRowJson(table);
    const schema = tableRowSchema(table.name as never);
    const base = Object.fromEntries(table.columns.map((c) => [c.name, NORMAL[c.kind]]));
    base.src_topic = 'topic "quoted" ü';
    const variants: Record<string, unknown>[] = [base, { ...base, extra: 'x' }];
    for (const col of table.columns) {
      const { [col.name]: _dropped, ...without } = base;
      variants.push(without);
      for (const probe of PROBES) variants.push({ ...base, [col.name]: probe });
    }
    for (const row of variants) {
      const source = { topic: row.src_topic, partition: row.src_partition, offset: row.src_offset };
      const payload = Object.fromEntries(Object.entries(row).filter(([key]) => !IDENTITY.has(key)));
      const quick = write(source as never, row.row_index as number, payload);
      if (quick === undefined) continue;
      fast += 1;
      const parsed = schema.safeParse(row);
      assert.ok(parsed.success, `${table.name}: fast path took ${JSON.stringify(row)}, zod refuses it`);
      assert.equal(quick, JSON.stringify(parsed.data), `${table.name}: ${JSON.stringify(row)}`);
    }
  }
  // The fast path must really take the common rows, or it saves nothing.
  assert.ok(fast > TABLES.length * 20, `fast path took only ${fast} rows`);
});

test('the fast row writer leaves ISO timestamps to zod, which parses them, and turns a true flag into 1 itself', () => {
  const table = TABLES.find((t) => t.name === 'logline_timestamps')!;
  const source = { topic: 't', partition: 0, offset: 1 };
  const row = {
    logline_id: 'l',
    stage: 's',
    status: 'in_process',
    timestamp: '2026-01-02T03:04:05.678Z',
    is_active: true,
  };
  assert.equal(fastRowJson(table)(source, 0, row), undefined);
  assert.deepEqual(JSON.parse(fastRowJson(table)(source, 0, { ...row, timestamp: 5 })!), {
    src_topic: 't',
    src_partition: 0,
    src_offset: 1,
    row_index: 0,
    ...row,
    timestamp: 5,
    is_active: 1,
  });
});
