import { code } from '../../kafka/error-codes.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { ProducerPort } from '../../kafka/producer.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { positionKey } from './position-key.ts';
import type { RecordFailure, RecordPosition, StageOutput } from '../stage.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';

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
export class RefusedOutputs extends HamstringError {
  override readonly name = 'RefusedOutputs';
  readonly code = 'OUTPUTS_REFUSED';
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

/**
 * Refusals the broker gives a whole produce batch for one record in it: the size of a record batch
 * (records batched with an oversized one are refused with it), and an invalid record (a null key to
 * a compacted topic, ...), which the broker names by index (KIP-467) but the client reports for
 * every record of the batch.
 */
const BATCH_LEVEL = new Set([
  code('MSG_SIZE_TOO_LARGE'),
  code('RECORD_LIST_TOO_LARGE'),
  code('INVALID_RECORD'),
]);

/** Probes of one suspect that end neither delivered nor refused before it counts as a culprit. */
const PROBE_ATTEMPTS = 3;

/**
 * The refusals that are the record's own fault. The client checks each record alone, but the broker
 * refuses a whole record batch for one oversized or invalid record in it (see BATCH_LEVEL). When it
 * refused more than one record so, the suspects are produced again one at a time (each delivered
 * before the next is produced, so each is a batch of its own) in probe transactions that are then
 * aborted; those refused alone are the culprits, the others were bystanders. A refused delivery
 * leaves a transaction able only to abort, so a probe transaction ends at each culprit: the probes
 * cost one transaction per culprit (plus one), not one per suspect. A suspect whose probe ends
 * neither way is probed again (seen: the first probe record after the refused transaction's abort
 * comes back purged, and the transaction then accepts only an abort); a bystander is probed once
 * more after the last culprit, for the same reason (see below).
 */
export async function culprits(
  producer: ProducerPort,
  refused: readonly KafkaError[],
  produced: readonly Produced[],
  timeoutMs: number,
): Promise<KafkaError[]> {
  const suspects = refused.flatMap((e) => {
    const output = e.record ? produced[e.record.index]?.output : undefined;
    return e.operation === 'delivery' && BATCH_LEVEL.has(e.code) && output ? [{ error: e, output }] : [];
  });
  if (suspects.length <= 1) return [...refused];
  const own = refused.filter((e) => !suspects.some((s) => s.error === e));
  let open = false;
  const abort = async () => {
    open = false;
    await producer.abortTransaction();
  };
  const probe = async (output: StageOutput): Promise<'culprit' | 'bystander'> => {
    for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt += 1) {
      if (!open) await producer.beginTransaction();
      open = true;
      const before = producer.tally();
      await producer.produce(output);
      await producer.flush(timeoutMs);
      const after = producer.tally();
      if (after.delivered > before.delivered) return 'bystander';
      // Refused, purged, or failed otherwise: the transaction accepts only an abort now.
      await abort();
      if (after.refused.length > before.refused.length) return 'culprit';
    }
    return 'culprit';
  };
  try {
    let bystander: StageOutput | undefined;
    let dirty = false;
    for (const suspect of suspects) {
      dirty = (await probe(suspect.output)) === 'culprit';
      if (dirty) own.push(suspect.error);
      else bystander = suspect.output;
    }
    // After an aborted refusal the producer's next record to that partition comes back purged and
    // the next commit that writes there fails (OUT_OF_ORDER_SEQUENCE_NUMBER): a bystander delivered
    // in a probe first leaves the producer clean for the batch's second round.
    if (dirty && bystander) await probe(bystander);
  } finally {
    if (open) await abort();
  }
  return own;
}
