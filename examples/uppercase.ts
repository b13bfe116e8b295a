/**
 * A stage to copy: it upper-cases every text record of one topic into another, exactly once.
 *
 *   node bin/hamstring.js run examples/uppercase.ts --config examples/uppercase.yaml --create-topics
 *
 * Topics: UPPERCASE_INPUT (default `examples.words`) to UPPERCASE_OUTPUT (default `examples.words-upper`).
 * A record that is not UTF-8 text is bad input: the stage throws a RecordError for it, and the
 * runtime dead-letters it to `examples.words.DLT` in the transaction that commits its offset,
 * while the other records of the batch go through.
 */
import { DecodeError, RecordError, type Stage, type StageOutput, type StageRecord } from 'hamstring';

const input = process.env.UPPERCASE_INPUT ?? 'examples.words';
const output = process.env.UPPERCASE_OUTPUT ?? 'examples.words-upper';
const utf8 = new TextDecoder('utf-8', { fatal: true });

function upperCased(record: StageRecord): StageOutput {
  let text: string;
  try {
    text = utf8.decode(record.value ?? new Uint8Array());
  } catch (e) {
    throw new RecordError(record, new DecodeError('value is not UTF-8 text', { cause: e }));
  }
  if (text.trim() === '') throw new RecordError(record, new DecodeError('value is empty'));
  // With `source` set, a bad record costs only the records after it in its partition a second pass.
  return { topic: output, key: record.key, value: text.toUpperCase(), source: record };
}

export const stage: Stage = {
  name: 'examples.uppercase',
  shortName: 'uppercase',
  inputTopics: [input],
  outputTopics: [output],
  process: (records) => ({ outputs: records.map(upperCased) }),
};
