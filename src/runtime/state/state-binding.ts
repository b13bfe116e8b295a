import type { ConsumerPort } from '../../kafka/consumer.ts';
import type { FetchedRecord, OutgoingRecord, TopicPartition } from '../../kafka/records.ts';
import type { AssignmentEpochs, EpochCause } from '../assignment-epochs.ts';
import type { CommittedFloor } from '../committed-floor.ts';
import type { PartitionState } from './contract.ts';
import type { StateEngine } from './state-engine.ts';
import type { StateTransaction } from './state-transaction.ts';

/**
 * Ties a worker's consume loop to its StateEngine. The loop calls it at a handful of points:
 * on every assignment change, to admit fetched records, once per iteration to let restored
 * partitions flow, and around each batch's (or timer call's) transaction. Store partitions are input
 * partition numbers: partition p of every input topic (and retry topic) shares the stores of p.
 */
export class StateBinding {
  #txn: StateTransaction | undefined;
  /** Set once commitTransaction was called for `#txn`: failing after that, the outcome is unknown. */
  #committing = false;
  /** `#txn` holds batches that joined the open Kafka transaction (a commit interval). */
  #spanning = false;
  /** The batch running now joined the open Kafka transaction: its changes stay with it. */
  #joined = false;
  /** Where the running batch's changes begin in `#txn`. */
  #batchMark = 0;
  /** `ctx.state(p)` of the open transaction, per partition: one object per batch, not per record. */
  readonly #views = new Map<number, PartitionState>();
  /** Partitions restored since the loop last looked, to be resumed. */
  #restored = new Set<number>();
  /** Partitions whose records arrived while restoring (before the pause took): rewind them. */
  readonly #early = new Set<number>();

  constructor(
    readonly engine: StateEngine,
    private readonly d: {
      epochs: AssignmentEpochs;
      /** The current consumer, if any. */
      consumer: () => ConsumerPort | undefined;
      /** This worker's own commits: the rewind below never goes under them. */
      committedFloor: CommittedFloor;
      apiTimeoutMs: number;
    },
  ) {}

  /**
   * An assignment change: newly assigned partitions are paused and restored; partitions no longer
   * assigned under any topic lose their stores (and any restore of them stops).
   */
  onEpochChange(cause: EpochCause, partitions: readonly TopicPartition[]): void {
    const assignedNumbers = new Set(this.d.epochs.assigned().map((tp) => tp.partition));
    if (cause === 'assign') {
      this.#restore(partitions.map((tp) => tp.partition));
      this.d.consumer()?.pause(partitions.filter((tp) => !this.engine.isReady(tp.partition)));
      return;
    }
    const gone =
      cause === 'reset'
        ? [...new Set([...partitions.map((tp) => tp.partition), ...this.engine.restoring()])]
        : [...new Set(partitions.map((tp) => tp.partition))].filter((p) => !assignedNumbers.has(p));
    this.engine.drop(gone);
    for (const p of gone) {
      this.#restored.delete(p);
      this.#early.delete(p);
    }
  }

  #restore(partitions: number[]): void {
    const fresh = [...new Set(partitions)].filter((p) => !this.engine.isReady(p));
    this.engine.assign(fresh, (ready) => {
      for (const p of ready) this.#restored.add(p);
    });
  }

  /** Whether an assigned partition must stay paused: its stores are still being restored. */
  isRestoring(tp: TopicPartition): boolean {
    return !this.engine.isReady(tp.partition);
  }

  /** Drops records of partitions still restoring; they are fetched again once restored. */
  admit(records: FetchedRecord[]): FetchedRecord[] {
    const out = records.filter((r) => this.engine.isReady(r.partition) && !this.#restored.has(r.partition));
    if (out.length < records.length)
      for (const r of records) if (!out.includes(r)) this.#early.add(r.partition);
    return out;
  }

  /**
   * Lets restored partitions flow: rewound to the group's committed offset if anything was fetched
   * from them early, then resumed. Called by the loop between batches.
   */
  async resumeRestored(): Promise<void> {
    if (this.#restored.size === 0) return;
    const consumer = this.d.consumer();
    if (!consumer) return;
    const numbers = this.#restored;
    this.#restored = new Set();
    const tps = this.d.epochs.assigned().filter((tp) => numbers.has(tp.partition));
    const rewind = tps.filter((tp) => this.#early.has(tp.partition));
    if (rewind.length > 0) {
      const reported = await consumer.committed(rewind, this.d.apiTimeoutMs);
      for (const c of this.d.committedFloor.apply(reported).positions)
        await consumer.seek(c, this.d.apiTimeoutMs);
      for (const tp of rewind) this.#early.delete(tp.partition);
    }
    consumer.resume(tps);
  }

  /** Opens the state transaction of a timer call, or of a batch that opens a Kafka transaction. */
  begin(): void {
    this.aborted();
    this.#txn = this.engine.begin();
  }

  /**
   * A batch begins. While `kafkaTxnOpen` and earlier batches joined that Kafka transaction (a commit
   * interval), the batch continues their state transaction from a mark; otherwise it opens its own.
   */
  beginBatch(kafkaTxnOpen: boolean): void {
    if (kafkaTxnOpen && this.#spanning && this.#txn?.state === 'open') {
      this.#batchMark = this.#txn.savepoint();
    } else {
      this.begin();
      this.#batchMark = 0;
    }
    this.#joined = false;
  }

  /** The running batch's outputs went into the open Kafka transaction, which commits later. */
  joined(): void {
    this.#joined = true;
    this.#spanning = true;
  }

  /**
   * The batch is over. Committed or aborted with its Kafka transaction by now, joined to the one
   * still open, or neither (stale, rewound, failed): then its changes alone go, and the earlier
   * batches' stay with their transaction.
   */
  endBatch(): void {
    if (this.#txn?.state !== 'open') return this.#end();
    if (this.#joined) {
      this.#joined = false;
      return;
    }
    if (this.#spanning) this.#txn.rollbackTo(this.#batchMark);
    else this.aborted();
  }

  /** `ctx.state(partition)` of the stage call running now. */
  partitionState(partition: number): PartitionState {
    if (!this.#txn) throw new Error('no state transaction is open');
    let view = this.#views.get(partition);
    if (!view) {
      view = this.engine.partitionState(this.#txn, partition);
      this.#views.set(partition, view);
    }
    return view;
  }

  /** A mark before one `process` call, to undo it if its result is thrown away. */
  savepoint(): number {
    return this.#txn?.savepoint() ?? 0;
  }

  rollbackTo(savepoint: number): void {
    this.#txn?.rollbackTo(savepoint);
  }

  /** Undoes the running batch's changes, not those of earlier batches in the same transaction. */
  rollbackBatch(): void {
    this.#txn?.rollbackTo(this.#batchMark);
  }

  /**
   * The changelog records of the open state transaction, to produce in the Kafka transaction: the
   * last write per key over every batch it spans.
   */
  changelogRecords(): OutgoingRecord[] {
    return this.#txn ? this.engine.changelogRecords(this.#txn) : [];
  }

  /** The loop is about to call commitTransaction. */
  committing(): void {
    this.#committing = true;
  }

  /** The Kafka transaction committed; `delivered` is the producer's delivered offsets. */
  committed(delivered: ReadonlyMap<string, number>): void {
    if (this.#txn?.state === 'open') this.engine.committed(this.#txn, delivered);
    this.#end();
  }

  /** The Kafka transaction aborted, or the batch went stale or failed before committing. */
  aborted(): void {
    if (this.#txn?.state === 'open') {
      if (this.#committing) this.#restoreAgain(this.engine.uncertain(this.#txn));
      else this.engine.aborted(this.#txn);
    }
    this.#end();
  }

  /**
   * After a commit of unknown outcome, whatever the recovery does next: the partitions are paused,
   * restored from the changelog (read_committed waits for the outcome), and then rewound to the
   * group's committed offsets, which reflect the same outcome.
   */
  #restoreAgain(partitions: number[]): void {
    if (partitions.length === 0) return;
    const numbers = new Set(partitions);
    const tps = this.d.epochs.assigned().filter((tp) => numbers.has(tp.partition));
    for (const p of partitions) this.#early.add(p);
    this.#restore(partitions);
    this.d.consumer()?.pause(tps);
  }

  #end(): void {
    this.#txn = undefined;
    this.#committing = false;
    this.#spanning = false;
    this.#joined = false;
    this.#batchMark = 0;
    this.#views.clear();
  }
}
