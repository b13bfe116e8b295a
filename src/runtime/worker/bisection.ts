import { KafkaError } from '../../kafka/kafka-error.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { positionKey } from '../record-errors/position-key.ts';
import { RecordError, type ProcessResult, type RecordFailure, type StageOutput } from '../stage.ts';
import type { WorkerMetrics } from '../worker-metrics.ts';
import { StaleBatch } from './worker-context.ts';

export interface IsolatedResult {
  outputs: StageOutput[];
  failures: RecordFailure[];
}

/**
 * Processes records so that every record ends as an output or a failure: a RecordError fails its
 * record and the rest is processed again; any other error bisects the batch down to the records
 * that fail alone (a poison record costs its own retries, not its neighbours'). Stale batches and
 * Kafka errors are not the records' fault and pass through.
 */
export async function processIsolated(
  invoke: (records: FetchedRecord[]) => Promise<ProcessResult>,
  records: FetchedRecord[],
  metrics: WorkerMetrics,
): Promise<IsolatedResult> {
  if (records.length === 0) return { outputs: [], failures: [] };
  try {
    const r = await invoke(records);
    return { outputs: r.outputs, failures: r.failures ?? [] };
  } catch (e) {
    if (e instanceof StaleBatch || e instanceof KafkaError) throw e;
    if (e instanceof RecordError) {
      const rest = records.filter((r) => positionKey(r) !== positionKey(e.record));
      if (rest.length < records.length) {
        const again = await processIsolated(invoke, rest, metrics);
        return {
          outputs: again.outputs,
          failures: [...again.failures, { record: e.record, error: e.cause }],
        };
      }
    }
    if (records.length === 1) return { outputs: [], failures: [{ record: records[0]!, error: e }] };
    metrics.bisections.inc();
    const mid = Math.ceil(records.length / 2);
    const left = await processIsolated(invoke, records.slice(0, mid), metrics);
    const right = await processIsolated(invoke, records.slice(mid), metrics);
    return { outputs: [...left.outputs, ...right.outputs], failures: [...left.failures, ...right.failures] };
  }
}
