import type { FetchedRecord, TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import type { AssignmentEpochs } from '../assignment-epochs.ts';
import type { Clock } from '../clock.ts';
import type { KafkaSession } from '../kafka-session.ts';
import { dueAt } from '../record-errors/retry-topics.ts';

interface Hold {
  partition: TopicPartition;
  offset: number;
  until: number;
}

/**
 * Partitions paused until a failed record's back-off ends (or a retry-topic record becomes due):
 * the partition waits, the others flow on. When the hold ends, the partition is rewound to the held
 * record and resumed.
 */
export class PartitionHolds {
  readonly #holds = new Map<string, Hold>();

  constructor(
    private readonly d: {
      clock: Clock;
      epochs: AssignmentEpochs;
      session: KafkaSession;
      apiTimeoutMs: number;
      retryTopics: boolean;
      /** Assigned partitions paused for another reason (their state stores are being restored). */
      restoring?: ((tp: TopicPartition) => boolean) | undefined;
    },
  ) {}

  has(tp: TopicPartition): boolean {
    return this.#holds.has(tpKey(tp));
  }

  /** Pauses `partition` until `until`; it is rewound to `offset` then. */
  hold(partition: TopicPartition, offset: number, until: number): void {
    this.#holds.set(tpKey(partition), { partition, offset, until });
    this.d.session.consumer.pause([partition]);
  }

  clear(): void {
    this.#holds.clear();
  }

  release(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.#holds.delete(tpKey(tp));
  }

  /** Assigned partitions that are not held (nor restoring). */
  flowing(): TopicPartition[] {
    return this.d.epochs.assigned().filter((tp) => !this.has(tp) && !this.d.restoring?.(tp));
  }

  /** Ends holds that are due: the partition is rewound to its held record and resumed. */
  async resumeDue(): Promise<void> {
    const now = this.d.clock.now();
    for (const [key, h] of this.#holds) {
      if (h.until > now) continue;
      this.#holds.delete(key);
      if (!this.d.epochs.isAssigned(h.partition) || !this.d.session.hasConsumer) continue;
      this.d.session.consumer.resume([h.partition]);
      await this.d.session.consumer.seek({ ...h.partition, offset: h.offset }, this.d.apiTimeoutMs);
    }
  }

  /**
   * Drops records of held partitions (anything a held partition delivers is early), and holds a
   * retry topic's partition at its first record that is not due yet: a retry topic is in due order,
   * so nothing behind it is due either.
   */
  admit(records: FetchedRecord[]): FetchedRecord[] {
    const fresh = records.filter((r) => !this.has(r));
    if (!this.d.retryTopics) return fresh;
    const now = this.d.clock.now();
    for (const r of fresh) {
      const due = dueAt(r);
      if (due === undefined || due <= now || this.has(r)) continue;
      this.hold({ topic: r.topic, partition: r.partition }, r.offset, due);
    }
    return fresh.filter((r) => {
      const held = this.#holds.get(tpKey(r));
      return held === undefined || r.offset < held.offset;
    });
  }
}
