import { stableId } from '../ids.ts';
import type { Batch, LogLine } from '../messages.ts';

/**
 * A suspicious batch split per `src_ip`, each part a batch of its own (the "suspicious batch") with
 * an id derived from the batch and the address, in order of first appearance.
 */
export function splitBySource(
  batch: Batch,
  inspectorName: string,
  stage: string,
): { srcIp: string; batch: Batch }[] {
  const groups = new Map<string, LogLine[]>();
  for (const line of batch.data) {
    const group = groups.get(line.src_ip) ?? [];
    group.push(line);
    groups.set(line.src_ip, group);
  }
  const context = new Set(batch.context_logline_ids ?? []);
  return [...groups].map(([srcIp, data]) => {
    const id = stableId('suspicious_batch', batch.batch_id, inspectorName, srcIp);
    const contextIds = data.filter((line) => context.has(line.logline_id)).map((line) => line.logline_id);
    return {
      srcIp,
      batch: {
        batch_tree_row_id: stableId('batch_tree', id, stage, inspectorName),
        batch_id: id,
        begin_timestamp: data[0]!.ts,
        end_timestamp: data[data.length - 1]!.ts,
        data,
        ...(contextIds.length > 0 ? { context_logline_ids: contextIds } : {}),
      },
    };
  });
}
