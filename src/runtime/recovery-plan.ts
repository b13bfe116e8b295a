import type { KafkaError } from '../kafka/kafka-error.ts';

/**
 * What the worker does about a classified Kafka error (docs/design.md, error table). Every action but
 * `retry-in-place` first aborts the open transaction (bounded) and discards its outputs.
 * - rewind: keep both clients, seek the assigned partitions back to the group's committed offsets.
 * - reset-consumer: close the consumer (leave the stale generation), subscribe a fresh one.
 * - recreate-producer: new producer with the same transactional id (fences nothing but our own past),
 *   then reset the consumer so the batch is fetched again.
 * A producer fenced by a newer instance is NOT recreated: that would fence the newer instance, which
 * would do the same (a ping-pong seen in the zombie test). The fenced instance is the zombie; it stops.
 * - reconnect: close the consumer, wait (visible back-off) until Kafka answers, recreate and init
 *   the producer, subscribe a fresh consumer.
 * - stop: nothing local can fix it; the worker stops and reports unhealthy.
 */
export type RecoveryAction =
  | { type: 'retry-in-place' }
  | { type: 'rewind' }
  | { type: 'reset-consumer' }
  | { type: 'recreate-producer'; why: 'fatal' | 'unknown-commit-outcome' | 'abort-failed' }
  | { type: 'reconnect' }
  | { type: 'stop'; reason: string };

export interface RecoveryContext {
  /** The API timeout of the failing call has passed (retries exhausted). */
  deadlinePassed: boolean;
  /** Fatal producer errors within the last minute, including this one. */
  recentFatal: number;
  /** Above this many fatal errors in a minute, recreating the producer is not helping: stop. */
  fatalLimit: number;
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
      return {
        type: 'stop',
        reason:
          'fenced: a newer instance uses the same transactional id, so this instance is a zombie and stops',
      };
    case 'fatal':
      if (ctx.recentFatal > ctx.fatalLimit) {
        return { type: 'stop', reason: `producer failed fatally ${ctx.recentFatal} times within a minute` };
      }
      return { type: 'recreate-producer', why: 'fatal' };
    case 'config':
      return { type: 'stop', reason: `configuration error: ${err.codeName}: ${err.message}` };
    case 'authorization':
      return { type: 'stop', reason: `not authorized: ${err.codeName}: ${err.message}` };
    case 'refused':
      return { type: 'rewind' };
  }
}
