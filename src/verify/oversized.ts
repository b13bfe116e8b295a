/**
 * The poison records of the `oversized` scenario: which input sequence numbers the verify stage
 * turns into an output Kafka refuses for its size, and how large that output is. Shared by the
 * worker (which makes them) and the checker (which expects exactly them in the dead-letter topic).
 */

/** `max.message.bytes` of the output topic when a scenario has oversized outputs. */
export const OVERSIZED_TOPIC_MAX_BYTES = 262_144;
/** Above the topic's limit and below the producer's `message.max.bytes` (1,000,000): the broker refuses it. */
const PAST_TOPIC_LIMIT_BYTES = 300_000;
/** Above the producer's default `message.max.bytes` (1,000,000): the client refuses it before sending. */
const PAST_PRODUCER_LIMIT_BYTES = 1_100_000;

/** How often each kind of poison record occurs among the input sequence numbers. */
export interface OversizedSchedule {
  /** Every `every`-th sequence number is poison (0 excluded: no poison is made). */
  every: number;
}

/**
 * The size of the output `seq` is turned into, or undefined when its output stays as is. Poison
 * records alternate between the two limits, so both the broker's refusal (whose record batch may
 * hold bystanders) and the client's are exercised.
 */
export function oversizedBytes(seq: number, s: OversizedSchedule): number | undefined {
  if (s.every <= 0 || seq % s.every !== 0) return undefined;
  return (seq / s.every) % 2 === 0 ? PAST_TOPIC_LIMIT_BYTES : PAST_PRODUCER_LIMIT_BYTES;
}

/** The sequence numbers among 0..records-1 that must end in the dead-letter topic. */
export function poisonSeqs(records: number, s: OversizedSchedule): Set<number> {
  const out = new Set<number>();
  for (let seq = 0; seq < records; seq += 1) if (oversizedBytes(seq, s) !== undefined) out.add(seq);
  return out;
}

/**
 * The oversized value of `seq`: the sequence number padded with spaces, so that one leaking into
 * the output would read as that sequence (`Number` ignores the padding) and be counted as unexpected.
 */
export function oversizedValue(seq: number, bytes: number): Buffer {
  return Buffer.from(String(seq).padEnd(bytes, ' '));
}
