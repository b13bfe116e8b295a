import { code } from '../../kafka/error-codes.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { ProducerPort } from '../../kafka/producer.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { positionKey } from './settlement-plan.ts';
import type { RecordFailure, RecordPosition, StageOutput } from '../stage.ts';

/** One record a transaction produced, in produce order, with the input record it came from if known. */
export interface Produced {
  output: StageOutput;
  source?: RecordPosition;
}

/**
 * A transaction failed because Kafka refused some of its records (kind `refused`): the input records
 * they came from (`failures`, for the record-error path) and the refusals no input record could be
 * named for (`unattributed`). Thrown by a committer after it aborted the transaction.
 */
export class RefusedOutputs extends Error {
  override readonly name = 'RefusedOutputs';
  constructor(
    readonly failures: RecordFailure[],
    readonly unattributed: KafkaError[],
  ) {
    super(
      `Kafka refused ${failures.length + unattributed.length} produced record(s): ` +
        [...failures.map((f) => (f.error as KafkaError).message), ...unattributed.map((e) => e.message)].join(
          '; ',
        ),
    );
  }
}

/**
 * Traces refused records back to their input records: a refusal names its record's index in the
 * transaction (`KafkaError.record`), the index names the output, the output its `source`. An output
 * without a source is attributed only when the batch had a single input record.
 */
export function attributeRefused(
  refused: readonly KafkaError[],
  produced: readonly Produced[],
  records: readonly FetchedRecord[],
): { failures: RecordFailure[]; unattributed: KafkaError[] } {
  const byPosition = new Map(records.map((r) => [positionKey(r), r]));
  const failures = new Map<string, RecordFailure>();
  const unattributed: KafkaError[] = [];
  for (const err of refused) {
    const source = err.record ? produced[err.record.index]?.source : undefined;
    const record = source
      ? byPosition.get(positionKey(source))
      : records.length === 1
        ? records[0]
        : undefined;
    if (!record) unattributed.push(err);
    else if (!failures.has(positionKey(record))) failures.set(positionKey(record), { record, error: err });
  }
  return { failures: [...failures.values()], unattributed };
}

const BATCH_LEVEL = new Set([code('MSG_SIZE_TOO_LARGE'), code('RECORD_LIST_TOO_LARGE')]);

/**
 * The refusals that are the record's own fault. The client checks each record alone and the broker
 * reports an invalid record by index (KIP-467), but the broker checks the size of a whole record
 * batch: records batched with an oversized one are refused with it. When the broker refused more
 * than one record for size, each is produced alone in a probe transaction that is then aborted;
 * those refused alone are the culprits, the others were bystanders.
 */
export async function culprits(
  producer: ProducerPort,
  refused: readonly KafkaError[],
  produced: readonly Produced[],
  timeoutMs: number,
): Promise<KafkaError[]> {
  const bySize = refused.filter((e) => e.operation === 'delivery' && BATCH_LEVEL.has(e.code) && e.record);
  if (bySize.length <= 1) return [...refused];
  const own = refused.filter((e) => !bySize.includes(e));
  // One probe transaction per suspect: after a refused delivery a transaction only accepts an abort.
  for (const suspect of bySize) {
    const output = produced[suspect.record!.index]?.output;
    if (!output) continue;
    await producer.beginTransaction();
    try {
      await producer.produce(output);
      await producer.flush(timeoutMs);
      if (producer.tally().refused.length > 0) own.push(suspect);
    } finally {
      await producer.abortTransaction();
    }
  }
  return own;
}
