import { classifyKafkaError } from '../../kafka/classify.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { code } from '../../kafka/error-codes.ts';
import { defaultClients, RetriesExhausted } from '../kafka-session.ts';
import {
  attributeRefused,
  culprits,
  RefusedOutputs,
  type Produced,
} from '../record-errors/refused-outputs.ts';
import { nextOffsets, partitionsOf } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import type { CommitInfo } from '../worker-options.ts';
import {
  checkDeclaredTopics,
  commitInfo,
  namedCommitFailure,
  settleNamed,
  type Committer,
} from './committer.ts';
import type { TransactionRunner } from './transaction-runner.ts';
import type { WorkerContext } from './worker-context.ts';
import type { AbortReason } from '../worker-options.ts';

/** What the committer reads of the worker. */
export type ExactlyOnceContext = Pick<
  WorkerContext,
  'o' | 'stage' | 'clock' | 'epochs' | 'session' | 'stores'
>;

/**
 * One transaction per batch: outputs, dead letters and input offsets commit together or not at all.
 * Transactional calls retry in place within the API timeout; anything else is thrown to the loop,
 * whose recovery plan aborts the transaction. A transaction that fails because Kafka refused some of
 * its records is aborted here and thrown as `RefusedOutputs`, naming the input records they came from.
 */
export class ExactlyOnceCommitter implements Committer {
  /**
   * A commit behind the loop failed: the next commits wait in the foreground until one holds, so the
   * replayed batch's refusal (if that was the cause) is named and dead-lettered, not failed again
   * behind the loop.
   */
  #foreground = false;

  constructor(
    private readonly ctx: ExactlyOnceContext,
    private readonly runner: TransactionRunner,
    private readonly stale: {
      abort(reason: AbortReason): Promise<void>;
      discard(records: FetchedRecord[], epoch: number, reason: string): Promise<void>;
    },
  ) {}

  async commit(
    records: FetchedRecord[],
    epoch: number,
    outputs: StageOutput[],
    deadLetters: StageOutput[],
  ): Promise<boolean> {
    const ctx = this.ctx;
    checkDeclaredTopics(ctx.stage, outputs);
    await this.settle();
    const info = commitInfo(epoch, records, outputs, deadLetters);
    const s = ctx.session;
    const t0 = ctx.clock.now();
    await this.runner.begin();
    const produced: Produced[] = [
      ...outputs.map((output) => ({ output, ...(output.source ? { source: output.source } : {}) })),
      ...deadLetters.map((output) => ({ output })),
    ];
    try {
      await this.runner.produce(produced.map((p) => p.output));
      const stale = await this.runner.end({
        offsets: nextOffsets(records),
        info,
        produced: produced.length,
        startedAt: t0,
        staleReason: () => ctx.epochs.staleReason(epoch, partitionsOf(records)),
        ...(this.#mayCommitBehind(info) ? { behind: 'commit' as const } : {}),
      });
      if (stale === undefined) {
        // Either the commit held here, or it went behind, which it does only when this is false already.
        this.#foreground = false;
        return true;
      }
      await this.stale.discard(records, epoch, stale);
      return false;
    } catch (e) {
      const refused = await this.#refused(e);
      if (refused === undefined)
        throw (
          (await this.#missingTopic(e, produced)) ??
          (await namedCommitFailure(e, s.producer, ctx.o.kafka.apiTimeoutMs))
        );
      await this.stale.abort('refused');
      const own = await culprits(s.producer, refused, produced, ctx.o.kafka.apiTimeoutMs);
      const { failures, unattributed } = attributeRefused(own.length > 0 ? own : refused, produced, records);
      throw new RefusedOutputs(failures, unattributed);
    }
  }

  /** Waits for the commit under way, if any; rejects with its error, named ({@link settleNamed}). */
  async settle(): Promise<void> {
    try {
      await settleNamed(this.runner, this.ctx);
    } catch (e) {
      this.#foreground = true;
      throw e;
    }
  }

  /** Nothing spans batches here: a clean stop only waits for the commit under way. */
  flush(): Promise<void> {
    return this.settle();
  }

  /**
   * librdkafka holds records for a topic that does not exist (deleted while the worker runs) until
   * message.timeout.ms, so the commit only times out ("N message(s) remaining") and would be retried
   * forever. A commit that timed out asks whether every topic it wrote to still exists; a missing one
   * is a configuration error naming it.
   */
  async #missingTopic(e: unknown, produced: readonly Produced[]): Promise<KafkaError | undefined> {
    const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'commit-transaction');
    if (err.codeName !== '_TIMED_OUT' || produced.length === 0) return undefined;
    const ctx = this.ctx;
    const admin = (ctx.o.clients?.admin ?? defaultClients.admin)(
      ctx.o.kafka.bootstrapServers,
      `${ctx.stage.name}-admin`,
    );
    try {
      const known = new Set(await admin.listTopics(ctx.o.kafka.apiTimeoutMs));
      const missing = [...new Set(produced.map((p) => p.output.topic))].filter((t) => !known.has(t));
      if (missing.length === 0) return undefined;
      return classifyKafkaError(
        {
          code: code('_UNKNOWN_TOPIC'),
          message:
            `topic(s) ${missing.join(', ')} written by stage ${ctx.stage.name} no longer exist on ` +
            `${ctx.o.kafka.bootstrapServers} (deleted while the worker ran); their records can never be delivered`,
        },
        'produce',
      );
    } catch {
      return undefined;
    } finally {
      admin.close();
    }
  }

  /** The records Kafka refused when `e` says some were, each naming its index; undefined otherwise. */
  async #refused(e: unknown): Promise<KafkaError[] | undefined> {
    const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'commit-transaction');
    if (err.kind !== 'refused') return undefined;
    if (err.record) return [err];
    // The commit failed with the refusal's code; the delivery reports say which records it was.
    const producer = this.ctx.session.producer;
    await producer.flush(this.ctx.o.kafka.apiTimeoutMs);
    const refused = producer.tally().refused;
    return refused.length > 0 ? refused : [err];
  }

  /**
   * Whether the commit call may run while the loop fetches the next batch: for a plain batch (a state
   * store learns of its commit synchronously, and dead letters and retry-topic forwards have
   * bookkeeping that assumes the commit held), unless a commit behind failed since the last one that
   * held. It goes behind at once, without waiting for the records' delivery: the commit delivers them
   * first and fails if any failed, and a refusal found so surfaces at the next settle; the batch is
   * then fetched again and committed in the foreground, where the refusal is named.
   */
  #mayCommitBehind(info: CommitInfo): boolean {
    return this.ctx.stores === undefined && info.deadLetters === 0 && !this.#foreground;
  }
}
