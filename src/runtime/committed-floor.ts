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
  readonly #floors = new Map<string, number>();

  /** The offsets of a commit that returned (next offset to read, per partition). */
  record(offsets: readonly TopicPartitionOffset[]): void {
    for (const o of offsets) this.#floors.set(tpKey(o), Math.max(o.offset, this.of(o) ?? o.offset));
  }

  /** The highest offset this worker committed for `tp`, if any. */
  of(tp: TopicPartition): number | undefined {
    return this.#floors.get(tpKey(tp));
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
   * Splits a fetched batch. A partition with any record below its floor was positioned below this
   * worker's own commit (a client that reset its offset reads "from the beginning"): none of its
   * records is processed, and `below` says where to seek it (the records above the floor in this
   * batch come again after that seek). Every other record is kept, in order.
   */
  screen(records: FetchedRecord[]): {
    kept: FetchedRecord[];
    below: { position: TopicPartitionOffset; fetched: number }[];
  } {
    const below = new Map<string, { position: TopicPartitionOffset; fetched: number }>();
    for (const r of records) {
      const floor = this.of(r);
      if (floor === undefined || r.offset >= floor || below.has(tpKey(r))) continue;
      below.set(tpKey(r), {
        position: { topic: r.topic, partition: r.partition, offset: floor },
        fetched: r.offset,
      });
    }
    if (below.size === 0) return { kept: records, below: [] };
    return { kept: records.filter((r) => !below.has(tpKey(r))), below: [...below.values()] };
  }
}
