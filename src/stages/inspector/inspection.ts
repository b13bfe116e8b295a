import type { InspectorConfig } from '../../config/index.ts';
import { stableId } from '../ids.ts';
import { timestampMicros, type Batch, type LogLine } from '../messages.ts';
import { binRequests, binWidthMicros, responseSize } from './binning.ts';
import type { StreamModel } from './univariate-models.ts';

/** A subnet's model state as the `models` store keeps it. */
export interface SubnetModel {
  /** End of the last scored bin (microseconds): later batches score only what follows. */
  readonly seenUntil: number;
  readonly states: unknown[];
}

export interface Inspection {
  readonly suspicious: boolean;
  /** Scored rows (bins from the batch's first new line on) and how many scored >= score_threshold. */
  readonly rows: number;
  readonly anomalous: number;
  /** The subnet's state after this batch (unchanged when nothing new was scored). */
  readonly next: SubnetModel | undefined;
}

/** Most bins one batch is scored on; see `binRequests`. */
export const MAX_BINS = 100_000;

/**
 * Scores a batch with its subnet's model: the requests after the subnet's last scored bin are binned
 * (`time_range` x `time_type`), each bin row [count] or [count, mean size] is scored and learnt, and
 * the batch is suspicious when the share of its rows scoring >= `score_threshold` exceeds
 * `anomaly_threshold`; the empty bins before its first new line (the quiet time since the last
 * batch) are learnt but are not rows of the batch. Context lines scored with the previous batch are not scored twice.
 */
export function inspect(
  batch: Batch,
  stored: SubnetModel | undefined,
  model: StreamModel<unknown[]>,
  inspector: Pick<InspectorConfig, 'time_type' | 'time_range' | 'score_threshold' | 'anomaly_threshold'>,
): Inspection {
  const times = batch.data.map((line) => timestampMicros(line.ts));
  const sizes = batch.data.map((line) => responseSize(line.size));
  const width = binWidthMicros(inspector.time_type, inspector.time_range);
  const series = binRequests(times, sizes, width, MAX_BINS, stored?.seenUntil);
  if (!series) return { suspicious: false, rows: 0, anomalous: 0, next: stored };
  const states = stored ? structuredClone(stored.states) : model.initial();
  // The quiet bins since the subnet's last batch are learnt, but the verdict is the batch's own:
  // counted among its rows, a pause of minutes (a restart) outnumbered any burst after it.
  const own = Math.max(
    0,
    series.counts.findIndex((count) => count > 0),
  );
  let anomalous = 0;
  for (let bin = 0; bin < series.counts.length; bin += 1) {
    const row = model.dims === 2 ? [series.counts[bin]!, series.meanSizes[bin]!] : [series.counts[bin]!];
    const score = model.scoreAndLearn(states, row);
    if (bin >= own && score >= inspector.score_threshold) anomalous += 1;
  }
  const rows = series.counts.length - own;
  return {
    suspicious: anomalous / rows > inspector.anomaly_threshold,
    rows,
    anomalous,
    next: { seenUntil: series.start + series.counts.length * series.width, states },
  };
}

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
