import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fastRowCheck } from '../../../src/monitoring/row-check.ts';
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

test('the fast row check accepts only rows the zod schema accepts, and outputs exactly what zod outputs', () => {
  let fast = 0;
  for (const table of TABLES) {
    const check = fastRowCheck(table);
    const schema = tableRowSchema(table.name as never);
    const base = Object.fromEntries(table.columns.map((c) => [c.name, NORMAL[c.kind]]));
    const variants: Record<string, unknown>[] = [base, { ...base, extra: 'x' }];
    for (const col of table.columns) {
      const { [col.name]: _dropped, ...without } = base;
      variants.push(without);
      for (const probe of PROBES) variants.push({ ...base, [col.name]: probe });
    }
    for (const row of variants) {
      const quick = check(row);
      if (quick === undefined) continue;
      fast += 1;
      const parsed = schema.safeParse(row);
      assert.ok(parsed.success, `${table.name}: fast path accepted ${JSON.stringify(row)}, zod refuses it`);
      assert.deepEqual(quick, parsed.data, `${table.name}: ${JSON.stringify(row)}`);
      assert.deepEqual(Object.keys(quick), Object.keys(parsed.data));
    }
  }
  // The fast path must really take the common rows, or it saves nothing.
  assert.ok(fast > TABLES.length * 20, `fast path took only ${fast} rows`);
});

test('the fast row check leaves ISO timestamps to zod, which parses them, and turns a true flag into 1 itself', () => {
  const table = TABLES.find((t) => t.name === 'logline_timestamps')!;
  const row = {
    src_topic: 't',
    src_partition: 0,
    src_offset: 1,
    row_index: 0,
    logline_id: 'l',
    stage: 's',
    status: 'in_process',
    timestamp: '2026-01-02T03:04:05.678Z',
    is_active: true,
  };
  assert.equal(fastRowCheck(table)(row), undefined);
  assert.deepEqual(fastRowCheck(table)({ ...row, timestamp: 5 }), { ...row, timestamp: 5, is_active: 1 });
});
