import type { KafkaError } from '../kafka/kafka-error.ts';

/**
 * What the worker does about a classified Kafka error (docs/design.md, error table). Every action but
 * `retry-in-place` first aborts the open transaction (bounded) and discards its outputs.
 * - rewind: keep both clients, seek the assigned partitions back to the group's committed offsets.
 * - reset-consumer: close the consumer (leave the stale generation), subscribe a fresh one.
 * - recreate-producer: new producer with the same transactional id (fences nothing but our own past),
 *   then reset the consumer so the batch is fetched again.
 * - reconnect: close the consumer, wait (visible back-off) until Kafka answers, recreate and init
 *   the producer, subscribe a fresh consumer.
 * - stop: nothing local can fix it; the worker stops and reports unhealthy.
 */
export type RecoveryAction =
  | { type: 'retry-in-place' }
  | { type: 'rewind' }
  | { type: 'reset-consumer' }
  | { type: 'recreate-producer'; why: 'fenced' | 'unknown-commit-outcome' | 'abort-failed' }
  | { type: 'reconnect' }
  | { type: 'stop'; reason: string };

export interface RecoveryContext {
  /** The API timeout of the failing call has passed (retries exhausted). */
  deadlinePassed: boolean;
  /** Producer fences seen within the fence window, including this one. */
  recentFences: number;
  /** Above this many fences in the window another live instance owns the transactional id. */
  fenceLimit: number;
}

export function planRecovery(err: KafkaError, ctx: RecoveryContext): RecoveryAction {
  switch (err.kind) {
    case 'membership':
      return { type: 'reset-consumer' };
    case 'transport':
      return { type: 'reconnect' };
    case 'abortable':
    case 'other':
      return { type: 'rewind' };
    case 'retriable':
      if (!ctx.deadlinePassed) return { type: 'retry-in-place' };
      // librdkafka has no KIP-890 protection: after a commit of unknown outcome only a new producer
      // (which aborts or completes the old transaction on init) makes the next transaction safe.
      if (err.operation === 'commit-transaction')
        return { type: 'recreate-producer', why: 'unknown-commit-outcome' };
      if (err.operation === 'abort-transaction') return { type: 'recreate-producer', why: 'abort-failed' };
      return { type: 'reconnect' };
    case 'fenced':
      if (ctx.recentFences > ctx.fenceLimit) {
        return {
          type: 'stop',
          reason: `producer fenced ${ctx.recentFences} times in a row: another live instance uses the same transactional id`,
        };
      }
      return { type: 'recreate-producer', why: 'fenced' };
    case 'config':
      return { type: 'stop', reason: `configuration error: ${err.codeName}: ${err.message}` };
  }
}
