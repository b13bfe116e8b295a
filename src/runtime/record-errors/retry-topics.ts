import type { FetchedRecord } from '../../kafka/records.ts';
import type { StageOutput } from '../stage.ts';

/**
 * Non-blocking retries (as Spring's retryable topics): a failed record is forwarded, in the same
 * transaction as its input offset, to `<origin>-retry-<n>` with a due time, and its partition moves
 * on. Trade-off: per-key order is given up for that record (later records of its partition overtake
 * it); use in-place back-off (the default) where order matters.
 */
export interface RetryTopics {
  /** Delay of each hop; their count is the number of retries before the dead letter. */
  delaysMs: readonly number[];
}

export const RETRY_HEADERS = {
  topic: 'hamstring.retry.original.topic',
  partition: 'hamstring.retry.original.partition',
  offset: 'hamstring.retry.original.offset',
  attempt: 'hamstring.retry.attempt',
  due: 'hamstring.retry.due',
  firstFailure: 'hamstring.retry.first.failure',
  error: 'hamstring.retry.error',
} as const;

export function retryTopicName(origin: string, hop: number): string {
  return `${origin}-retry-${hop}`;
}

export function retryTopicsOf(inputTopics: readonly string[], rt: RetryTopics): string[] {
  return inputTopics.flatMap((t) => rt.delaysMs.map((_, i) => retryTopicName(t, i + 1)));
}

const header = (r: FetchedRecord, name: string) => r.headers[name]?.toString();

/** Where a record really comes from, and how many retry hops it has made (0 for an input record). */
export function retryOrigin(r: FetchedRecord): {
  topic: string;
  partition: number;
  offset: number;
  hops: number;
  firstFailure: number | undefined;
} {
  const topic = header(r, RETRY_HEADERS.topic);
  if (topic === undefined)
    return { topic: r.topic, partition: r.partition, offset: r.offset, hops: 0, firstFailure: undefined };
  return {
    topic,
    partition: Number(header(r, RETRY_HEADERS.partition)),
    offset: Number(header(r, RETRY_HEADERS.offset)),
    hops: Number(header(r, RETRY_HEADERS.attempt) ?? '0'),
    firstFailure: Number(header(r, RETRY_HEADERS.firstFailure)),
  };
}

/** When a record read from a retry topic may be processed (undefined: at once). */
export function dueAt(r: FetchedRecord): number | undefined {
  const due = header(r, RETRY_HEADERS.due);
  return due === undefined ? undefined : Number(due);
}

/** The next hop of a failed record, or undefined when its retries are used up. */
export function forwardToRetry(
  r: FetchedRecord,
  rt: RetryTopics,
  error: unknown,
  now: number,
): StageOutput | undefined {
  const origin = retryOrigin(r);
  const hop = origin.hops + 1;
  const delay = rt.delaysMs[hop - 1];
  if (delay === undefined) return undefined;
  const own = Object.fromEntries(
    Object.entries(r.headers).filter(([k]) => !k.startsWith('hamstring.retry.')),
  );
  return {
    topic: retryTopicName(origin.topic, hop),
    key: r.key,
    value: r.value,
    headers: {
      ...own,
      [RETRY_HEADERS.topic]: origin.topic,
      [RETRY_HEADERS.partition]: String(origin.partition),
      [RETRY_HEADERS.offset]: String(origin.offset),
      [RETRY_HEADERS.attempt]: String(hop),
      [RETRY_HEADERS.due]: String(now + delay),
      [RETRY_HEADERS.firstFailure]: String(origin.firstFailure ?? now),
      [RETRY_HEADERS.error]: error instanceof Error ? error.message : String(error),
    },
  };
}

/** The record as it was in its origin topic (for its dead letter). */
export function asOriginal(r: FetchedRecord): FetchedRecord {
  const o = retryOrigin(r);
  if (o.hops === 0) return r;
  const headers = Object.fromEntries(
    Object.entries(r.headers).filter(([k]) => !k.startsWith('hamstring.retry.')),
  );
  return { ...r, topic: o.topic, partition: o.partition, offset: o.offset, headers };
}
