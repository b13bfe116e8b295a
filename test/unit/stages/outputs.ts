import { monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import type { StageOutput } from '../../../src/runtime/index.ts';
import { decodeBatch, type Batch } from '../../../src/stages/messages.ts';

/** The batches a stage's outputs send to `topic`, with their keys. */
export function batchesSent(outputs: readonly StageOutput[], topic: string): { key: string; batch: Batch }[] {
  return outputs
    .filter((o) => o.topic === topic)
    .map((o) => ({ key: String(o.key), batch: decodeBatch(o.value as string) }));
}

/**
 * The monitoring rows a stage's outputs write to ClickHouse table `table`, expanded as the
 * monitoring agent reads them.
 */
export function monitoringRows(outputs: readonly StageOutput[], table: string): Record<string, unknown>[] {
  return outputs
    .filter((o) => o.topic === `clickhouse_${table}`)
    .flatMap((o) => monitoringRowsOfJson(JSON.parse(String(o.value))) as Record<string, unknown>[]);
}
