import type Kafka from '@confluentinc/kafka-javascript';
import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError } from './kafka-error.ts';
import type { TopicPartition } from './records.ts';

/** Rebalance notifications, delivered on the event loop while the consumer is polled. */
export interface RebalanceListener {
  onAssign(partitions: TopicPartition[]): void;
  /** Partitions are being taken away; their offsets can still be committed until the callback returns. */
  onRevoke(partitions: TopicPartition[]): void;
  /** Ownership is already gone (session expired, max.poll exceeded): no commit for them is safe. */
  onLost(partitions: TopicPartition[]): void;
}

/** The binding's consumer with the calls its typings leave out. */
export interface NativeConsumer extends Kafka.KafkaConsumer {
  incrementalAssign(tps: Kafka.TopicPartition[]): void;
  incrementalUnassign(tps: Kafka.TopicPartition[]): void;
  assignmentLost(): boolean;
  rebalanceProtocol(): 'NONE' | 'COOPERATIVE' | 'EAGER';
  commitCb(tps: Kafka.TopicPartitionOffset[], cb: (err: unknown) => void): void;
  setDefaultIsTimeoutOnlyForFirstMessage(only: boolean): void;
}

const ASSIGN = code('_ASSIGN_PARTITIONS');
const REVOKE = code('_REVOKE_PARTITIONS');

export function toTp(list: { topic: string; partition: number }[]): TopicPartition[] {
  return list.map(({ topic, partition }) => ({ topic, partition }));
}

/**
 * The consumer's `rebalance_cb`: (un)assigns as the group's protocol wants (incremental for
 * cooperative) and tells the listener, revoked apart from lost.
 */
export function rebalanceHandler(
  consumer: () => NativeConsumer,
  listener: RebalanceListener,
  onError: (err: KafkaError) => void,
  log: Logger,
): (err: { code: number } | undefined, assignment: Kafka.TopicPartition[]) => void {
  return (err, assignment) => {
    const native = consumer();
    const tps = toTp(assignment);
    try {
      if (err?.code === ASSIGN) {
        if (native.rebalanceProtocol() === 'COOPERATIVE') native.incrementalAssign(assignment);
        else native.assign(assignment);
        listener.onAssign(tps);
      } else if (err?.code === REVOKE) {
        // Lost must be read inside the callback, before the unassign.
        const lost = native.assignmentLost();
        if (lost) listener.onLost(tps);
        else listener.onRevoke(tps);
        if (native.rebalanceProtocol() === 'COOPERATIVE') native.incrementalUnassign(assignment);
        else native.unassign();
      } else {
        log.warn({ code: err?.code }, 'kafka: unexpected rebalance event');
      }
    } catch (e) {
      // A rebalance that arrives while the client is closing fails to (un)assign; nothing to do then.
      if (native.isConnected()) onError(classifyKafkaError(e, 'consume'));
    }
  };
}
