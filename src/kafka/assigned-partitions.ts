import type { RebalanceListener } from './consumer-rebalance.ts';
import { tpKey, type TopicPartition } from './records.ts';

/**
 * The partitions a consumer was given, kept from its rebalance events and manual assignments. The
 * binding's own `assignments()` is a round trip to librdkafka's thread: about half a millisecond of
 * the event loop on a busy host, which a consumer's lag and end-of-input questions paid each time.
 * Only those questions read this list; what a worker owns is decided by the rebalance events, as
 * before. A partition missing here (or left over) makes an answer "not at the end" or the lag
 * smaller for a moment, never a record read or committed differently.
 */
export class AssignedPartitions {
  readonly #partitions = new Map<string, TopicPartition>();

  /** `listener`, with this list updated before each event reaches it. */
  tracking(listener: RebalanceListener): RebalanceListener {
    return {
      onAssign: (partitions) => {
        this.add(partitions);
        listener.onAssign(partitions);
      },
      onRevoke: (partitions) => {
        this.#remove(partitions);
        listener.onRevoke(partitions);
      },
      onLost: (partitions) => {
        this.#remove(partitions);
        listener.onLost(partitions);
      },
    };
  }

  add(partitions: readonly TopicPartition[]): void {
    // Only topic and partition: an offset given with a manual assignment is not kept.
    for (const p of partitions) this.#partitions.set(tpKey(p), { topic: p.topic, partition: p.partition });
  }

  list(): TopicPartition[] {
    return [...this.#partitions.values()];
  }

  #remove(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) this.#partitions.delete(tpKey(p));
  }
}
