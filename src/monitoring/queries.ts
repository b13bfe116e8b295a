import { IDENTITY_KEY, dedupViewName, qualified, quoteIdent } from './tables.ts';

/**
 * Reading monitoring tables without the duplicates of an at-least-once replay.
 *
 * The tables are ReplacingMergeTree ordered by the row identity (src_topic, src_partition,
 * src_offset, row_index): a replayed insert adds a second copy that disappears at the next merge,
 * which may be much later. Until then every read must de-duplicate, in one of three ways (all valid
 * on ClickHouse 18.16 and current ClickHouse):
 *
 * 1. `SELECT ... FROM <table>_dedup`: a view `SELECT * FROM <table> FINAL` created with the table;
 *    dashboards should read these views.
 * 2. `FROM <table> FINAL` directly (merges at read time; fine for monitoring volumes).
 * 3. `GROUP BY src_topic, src_partition, src_offset, row_index` with `any()`/`argMax()` for the
 *    other columns; it scales best for large aggregations.
 *
 * `SELECT count() FROM <table>` without any of these counts duplicates (see rawCountSql).
 */

/** Rows as stored, duplicates of replays included (diagnostics only). */
export function rawCountSql(database: string, table: string): string {
  return `SELECT count() AS n FROM ${qualified(database, table)}`;
}

/** Distinct rows, through the `_dedup` view (FINAL). */
export function dedupCountSql(database: string, table: string): string {
  return `SELECT count() AS n FROM ${qualified(database, dedupViewName(table))}`;
}

/** Distinct identities by GROUP BY: independent of merges and of FINAL. */
export function distinctIdentityCountSql(database: string, table: string): string {
  const key = IDENTITY_KEY.map(quoteIdent).join(', ');
  return `SELECT count() AS n FROM (SELECT ${key} FROM ${qualified(database, table)} GROUP BY ${key})`;
}
