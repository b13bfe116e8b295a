import {
  tpKey,
  type FetchedRecord,
  type TopicPartition,
  type TopicPartitionOffset,
} from '../kafka/records.ts';

/**
 * The input offsets this worker committed, per partition: a floor under every rewind.
 *
 * A rewind seeks back to the group's committed offsets as the coordinator reports them. While a
 * member holds a partition nobody else commits for it, and a fenced zombie cannot commit at all, so
 * the group's offset is never below what this worker committed for it: an answer below that (no
 * offset at all, read as "from the beginning") would make the worker consume, process and commit
 * again everything it had committed, each output twice. A CI run of the state tests committed all
 * 2,000 records of its first two transactions a second time after an abort mid-span, as if the
 * group had reported no offsets. After a partition moves away and back the group's offset has only
 * gone forward, so a floor from an earlier assignment is still below it, and kept.
 *
 * The same holds for every position the client takes by itself (an assignment's committed offset,
 * an offset reset): a fetched record below the floor is one this worker already committed, and
 * {@link screen} keeps it from being processed again.
 */
export class CommittedFloor {
  /** Per topic, per partition: every fetched record is looked up, without building a key. */
  readonly #floors = new Map<string, Map<number, number>>();

  /** The offsets of a commit that returned (next offset to read, per partition). */
  record(offsets: readonly TopicPartitionOffset[]): void {
    for (const o of offsets) {
      let topic = this.#floors.get(o.topic);
      if (topic === undefined) this.#floors.set(o.topic, (topic = new Map<number, number>()));
      topic.set(o.partition, Math.max(o.offset, topic.get(o.partition) ?? o.offset));
    }
  }

  /** The highest offset this worker committed for `tp`, if any. */
  of(tp: TopicPartition): number | undefined {
    return this.#floors.get(tp.topic)?.get(tp.partition);
  }

  /**
   * Where a rewind goes: the group's offset, or this worker's own commit where the group reported
   * less (`raised` lists those, for the log).
   */
  apply(reported: readonly TopicPartitionOffset[]): {
    positions: TopicPartitionOffset[];
    raised: { partition: string; reported: number; floor: number }[];
  } {
    const raised: { partition: string; reported: number; floor: number }[] = [];
    const positions = reported.map((r) => {
      const floor = this.of(r);
      if (floor === undefined || r.offset >= floor) return r;
      raised.push({ partition: tpKey(r), reported: r.offset, floor });
      return { ...r, offset: floor };
    });
    return { positions, raised };
  }

  /**
   * Drops the records below their partition's floor (a client that reset its offset reads "from the
   * beginning"); every other record is kept, in order. Per partition, `below` says how many were
   * dropped from which offset on, and `seek` when none of its records in the batch reached the floor:
   * seeking it to the floor then skips the rest at once. The seek only saves fetching: without it
   * the partition's records keep being dropped up to the floor, and records at or above it are
   * never dropped, so a failed seek loses nothing.
   */
  screen(records: FetchedRecord[]): {
    kept: FetchedRecord[];
    below: Below[];
  } {
    let below: Map<string, Below> | undefined;
    for (const r of records) {
      const floor = this.of(r);
      if (floor === undefined || (below === undefined && r.offset >= floor)) continue;
      const key = tpKey(r);
      const b = below?.get(key);
      if (r.offset >= floor) {
        if (b) b.seek = false;
        continue;
      }
      below ??= new Map();
      if (b) b.dropped += 1;
      else
        below.set(key, {
          floor: { topic: r.topic, partition: r.partition, offset: floor },
          fetched: r.offset,
          dropped: 1,
          seek: true,
        });
    }
    if (below === undefined) return { kept: records, below: [] };
    return { kept: records.filter((r) => r.offset >= (this.of(r) ?? r.offset)), below: [...below.values()] };
  }
}

/** A partition fetched below this worker's own commit, in one batch. */
export interface Below {
  /** The partition and its floor: where a seek takes it. */
  floor: TopicPartitionOffset;
  /** The first offset fetched below the floor. */
  fetched: number;
  /** How many of the batch's records were below the floor. */
  dropped: number;
  /** None of the partition's records in the batch reached the floor. */
  seek: boolean;
}
