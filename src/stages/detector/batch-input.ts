import { DecodeError, type StageRecord } from '../../runtime/index.ts';
import { batchSchema, type Batch } from './messages.ts';

/** Decodes one suspicious batch; anything else is a {@link DecodeError} (dead-lettered at once). */
export function decodeBatch(record: StageRecord): Batch {
  if (record.value === null) throw new DecodeError('empty record (expected a batch)');
  let json: unknown;
  try {
    json = JSON.parse(record.value.toString('utf8'));
  } catch (e) {
    throw new DecodeError(`not JSON: ${(e as Error).message}`);
  }
  const parsed = batchSchema.safeParse(json);
  if (!parsed.success)
    throw new DecodeError(
      `not a batch: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
