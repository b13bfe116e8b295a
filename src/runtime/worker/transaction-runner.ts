import type { ProducerPort } from '../../kafka/producer.ts';
import type { OutgoingRecord, TopicPartitionOffset } from '../../kafka/records.ts';
import type { StateBinding } from '../state/state-binding.ts';
import type { CommitInfo, WorkerHooks } from '../worker-options.ts';
import type { Transaction } from './transaction.ts';
import type { AbortReason } from '../worker-options.ts';

export interface TransactionRunnerDeps {
  readonly txn: Transaction;
  readonly producer: () => Pick<ProducerPort, 'deliveredOffsets'>;
  readonly hooks: Pick<WorkerHooks, 'beforeSendOffsets' | 'beforeCommit' | 'afterCommit'>;
  readonly stores: Pick<StateBinding, 'changelogRecords' | 'committing' | 'committed'> | undefined;
  /** Bookkeeping once a commit returned: status, metrics, alert windows, the offsets it committed. */
  committed(produced: number, startedAt: number, offsets: readonly TopicPartitionOffset[]): void;
  /** Aborts the open transaction with the recovery's bookkeeping; a failed abort is planned for there. */
  abort(reason: AbortReason): Promise<void>;
}

/** How one transaction ends. */
export interface Ending {
  /** The input offsets it commits; none for a timer call. */
  offsets?: readonly TopicPartitionOffset[];
  /** What the commit hooks are told; none: no hooks are called (a timer call). */
  info?: CommitInfo;
  /** Outputs and dead letters it produced, for the metrics. */
  produced: number;
  startedAt: number;
  /** The changelog records to produce before the offsets; default: the state stores' pending ones. */
  changelog?: readonly OutgoingRecord[];
  /** Why it must not commit (a revoke arrived meanwhile), asked last before the offsets bind. */
  staleReason(): string | undefined;
  /**
   * Which part may run while the loop fetches the next batch (settled by {@link TransactionRunner.settle}):
   * by default nothing; `offsets-and-commit`: sending the offsets and the commit; `commit`: the
   * commit alone, once the offsets are sent.
   */
  behind?: 'offsets-and-commit' | 'commit';
}

/**
 * Begin, produce, end: the one sequence every transaction of the worker takes (a batch, a span of
 * batches, a timer call), on the guarded {@link Transaction}. Ending produces the changelog, asks
 * `beforeSendOffsets`, aborts a stale transaction, sends the offsets, asks `beforeCommit`, commits,
 * tells the state stores and the bookkeeping, then `afterCommit`.
 */
export class TransactionRunner {
  /** The end of a transaction still under way while the loop fetches the next batch ({@link settle}). */
  #committing: Promise<void> | undefined;

  constructor(private readonly d: TransactionRunnerDeps) {}

  get txn(): Transaction {
    return this.d.txn;
  }

  begin(): Promise<void> {
    return this.d.txn.begin();
  }

  async produce(records: Iterable<OutgoingRecord>): Promise<void> {
    for (const r of records) await this.d.txn.produce(r);
  }

  /** Ends the open transaction; the stale reason when it was aborted instead (nothing committed). */
  async end(e: Ending): Promise<string | undefined> {
    const d = this.d;
    await this.produce(e.changelog ?? d.stores?.changelogRecords() ?? []);
    if (e.info) await d.hooks.beforeSendOffsets?.(e.info);
    // Last check before the offsets bind to this generation: a revoke may have arrived meanwhile.
    const stale = e.staleReason();
    if (stale !== undefined) {
      await d.abort('stale');
      return stale;
    }
    const behind = e.behind;
    if (behind === 'offsets-and-commit') {
      this.#behind(this.#offsets(e).then(() => this.#commit(e)));
      return undefined;
    }
    await this.#offsets(e);
    if (behind === 'commit') this.#behind(this.#commit(e));
    else await this.#commit(e);
    return undefined;
  }

  /** Waits for the end under way, if any; rejects with its error (the transaction is then `failed`). */
  async settle(): Promise<void> {
    const committing = this.#committing;
    this.#committing = undefined;
    await committing;
  }

  async #offsets(e: Ending): Promise<void> {
    if (e.offsets !== undefined) await this.d.txn.sendOffsets([...e.offsets]);
    if (e.info) await this.d.hooks.beforeCommit?.(e.info);
  }

  async #commit(e: Ending): Promise<void> {
    const d = this.d;
    d.stores?.committing();
    await d.txn.commit();
    d.stores?.committed(d.producer().deliveredOffsets());
    d.committed(e.produced, e.startedAt, e.offsets ?? []);
    if (e.info) await d.hooks.afterCommit?.(e.info);
  }

  #behind(committing: Promise<void>): void {
    // Surfaced by settle(); until then the rejection is not unhandled.
    committing.catch(() => undefined);
    this.#committing = committing;
  }
}
