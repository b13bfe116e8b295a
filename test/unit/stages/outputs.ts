import { monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import type { StageOutput } from '../../../src/runtime/index.ts';
import { linesOf } from '../../../src/stages/line-frames.ts';
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

/** The lines a logserver's outputs send to collectors, a frame's one by one, in order. */
export function linesSent(
  outputs: readonly StageOutput[],
): { topic: string; key: string | null; line: string; framed: boolean }[] {
  return outputs
    .filter((o) => o.topic.startsWith('pipeline-'))
    .flatMap((o) => {
      const value = o.value === null ? null : Buffer.from(o.value);
      const { lines, framed } = linesOf({ value, headers: o.headers ?? {} });
      const key = o.key === undefined || o.key === null ? null : String(o.key);
      return lines.map((line) => ({ topic: o.topic, key, line: line.toString('utf8'), framed }));
    });
}
