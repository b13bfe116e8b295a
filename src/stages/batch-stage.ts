import type { ProcessResult, RecordFailure, StageOutput, StageRecord } from '../runtime/index.ts';
import { decodeBatch, type Batch } from './messages.ts';
import { CallRows, type EmitRow } from './monitoring-rows.ts';

/** One decoded input batch of a batch stage's `process` call, with what its handler needs. */
export interface BatchStep {
  readonly record: StageRecord;
  readonly batch: Batch;
  /** The clock's reading for this record, shared by all its monitoring rows. */
  readonly now: number;
  /** The columns every batch row of this stage instance repeats. */
  readonly stamp: { readonly stage: string; readonly instance_name: string; readonly timestamp: number };
  readonly emit: EmitRow;
  /** Where the handler appends its pipeline outputs (monitoring rows go here too, via `emit`). */
  readonly outputs: StageOutput[];
}

export interface BatchStageIdentity {
  /** The stage's monitoring name, e.g. `log_filtering.prefilter`. */
  readonly stage: string;
  /** The configured name of the instance this stage runs. */
  readonly instanceName: string;
  readonly now: () => number;
  readonly monitoringTopicPrefix?: string | undefined;
}

/**
 * The `process` plumbing shared by the stages that take one Batch per record (prefilter,
 * inspector): a record that is not a Batch becomes a failure (dead-lettered) without stopping
 * the call, and each batch is recorded as `in_process` before `handle` decides what becomes of it.
 */
export function processBatches(
  records: readonly StageRecord[],
  identity: BatchStageIdentity,
  handle: (step: BatchStep) => void,
): ProcessResult {
  const outputs: StageOutput[] = [];
  const failures: RecordFailure[] = [];
  const rows = new CallRows(identity.monitoringTopicPrefix);
  for (const record of records) {
    let batch: Batch;
    try {
      batch = decodeBatch(record.value);
    } catch (error) {
      failures.push({ record, error });
      continue;
    }
    const now = identity.now();
    const emit = rows.about(record);
    const stamp = { stage: identity.stage, instance_name: identity.instanceName, timestamp: now };
    emit('batch_timestamps', {
      ...stamp,
      batch_id: batch.batch_id,
      status: 'in_process',
      is_active: true,
      message_count: batch.data.length,
    });
    handle({ record, batch, now, stamp, emit, outputs });
  }
  rows.flush(outputs);
  return failures.length > 0 ? { outputs, failures } : { outputs };
}
