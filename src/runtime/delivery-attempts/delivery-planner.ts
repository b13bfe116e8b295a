import type { FetchedRecord, TopicPartition, TopicPartitionOffset } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import type { AttemptStore, DeliveryMarker } from './attempt-store.ts';
import { deliveriesOf, nextMarker } from './next-marker.ts';

export interface DeliveryPlan {
  /** Records to hand to the stage. */
  process: FetchedRecord[];
  /** Records to dead-letter unprocessed: their deliveries are exhausted. */
  poison: FetchedRecord[];
  /** Partitions cut down to one record: after the commit their position moves right behind it. */
  seekAfter: TopicPartitionOffset[];
}

/**
 * Bounded redelivery. Before a batch reaches the stage, each partition's durable marker is advanced
 * and written; a batch start that keeps coming back without a commit (crash, stall, timeout) puts the
 * partition into a one-record-at-a-time search, and a record that never completes is dead-lettered.
 */
export class DeliveryPlanner {
  readonly #cache = new Map<string, DeliveryMarker | null>();
  /** Each partition's marker before the last plan advanced it, for {@link forgive}. */
  readonly #before = new Map<string, DeliveryMarker | null>();

  constructor(
    private readonly store: AttemptStore | undefined,
    private readonly group: string,
    private readonly maxDeliveries: number,
  ) {}

  /** Markers of these partitions (all when omitted) must be read again: another owner may have written. */
  forget(partitions?: readonly TopicPartition[]): void {
    if (!partitions) {
      this.#cache.clear();
      this.#before.clear();
    } else
      for (const tp of partitions) {
        this.#cache.delete(tpKey(tp));
        this.#before.delete(tpKey(tp));
      }
  }

  /**
   * The last plan's deliveries of these partitions did not fail because of their records: the stage
   * finished them, and then the transaction aborted (a Kafka error, a revoke) or the batch went stale.
   * Their next plan starts from the marker they had before, so only deliveries that never completed
   * (a crash, a stall, a processing timeout) count towards `max_deliveries`. Without this, a run of
   * aborted transactions (a broker fault that outlasts a few batches) sent innocent records to the
   * dead-letter topic as `redelivery-exhausted`. Memory only: the next plan writes the marker; an
   * owner that takes the partition over meanwhile reads the stored one and counts one delivery more.
   */
  forgive(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) {
      const key = tpKey(tp);
      if (this.#before.has(key)) this.#cache.set(key, this.#before.get(key) ?? null);
      this.#before.delete(key);
    }
  }

  async plan(records: readonly FetchedRecord[]): Promise<DeliveryPlan> {
    if (!this.store) return { process: [...records], poison: [], seekAfter: [] };
    const byPartition = new Map<
      string,
      { first: FetchedRecord; last: FetchedRecord; list: FetchedRecord[] }
    >();
    for (const r of records) {
      const part = byPartition.get(tpKey(r));
      if (part) {
        part.list.push(r);
        part.last = r;
      } else byPartition.set(tpKey(r), { first: r, last: r, list: [r] });
    }
    const unknown = [...byPartition.values()]
      .map((part) => part.first)
      .filter((r) => !this.#cache.has(tpKey(r)))
      .map(({ topic, partition }) => ({ topic, partition }));
    if (unknown.length > 0) {
      const found = await this.store.get(this.group, unknown);
      for (const tp of unknown) this.#cache.set(tpKey(tp), found.get(tpKey(tp)) ?? null);
    }
    const plan: DeliveryPlan = { process: [], poison: [], seekAfter: [] };
    const puts: { partition: TopicPartition; marker: DeliveryMarker }[] = [];
    for (const [key, { first, last, list }] of byPartition) {
      this.#before.set(key, this.#cache.get(key) ?? null);
      const { marker, action } = nextMarker(
        this.#cache.get(key) ?? undefined,
        first.offset,
        last.offset,
        this.maxDeliveries,
      );
      this.#cache.set(key, marker);
      puts.push({ partition: { topic: first.topic, partition: first.partition }, marker });
      if (action === 'normal') {
        plan.process.push(...list);
        continue;
      }
      (action === 'single' ? plan.process : plan.poison).push(first);
      if (list.length > 1)
        plan.seekAfter.push({ topic: first.topic, partition: first.partition, offset: first.offset + 1 });
    }
    await this.store.put(this.group, puts);
    return plan;
  }

  /**
   * How often the record at `p` was delivered without completing, by the marker of its partition's
   * last plan (for the dead letter of a record that plan found poison); undefined without a store.
   */
  deliveries(p: TopicPartitionOffset): number | undefined {
    const marker = this.#cache.get(tpKey(p));
    return marker ? deliveriesOf(marker, p.offset) : undefined;
  }

  /** A known, handled failure (back-off retry) is not a lost delivery: its count starts over. */
  async settled(retries: readonly TopicPartitionOffset[]): Promise<void> {
    if (!this.store || retries.length === 0) return;
    const puts = retries.map((r) => {
      const prev = this.#cache.get(tpKey(r));
      const marker: DeliveryMarker = {
        offset: r.offset,
        count: 0,
        ...(prev?.suspectEnd !== undefined ? { suspectEnd: prev.suspectEnd } : {}),
      };
      this.#cache.set(tpKey(r), marker);
      return { partition: { topic: r.topic, partition: r.partition }, marker };
    });
    await this.store.put(this.group, puts);
  }
}
