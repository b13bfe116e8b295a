import { classifyKafkaError } from '../../kafka/classify.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { FetchedRecord } from '../../kafka/records.ts';
import { code } from '../../kafka/error-codes.ts';
import { defaultClients, RetriesExhausted } from '../kafka-session.ts';
import {
  attributeRefused,
  awaitDeliveryReports,
  culprits,
  RefusedOutputs,
  type Produced,
} from '../refused-outputs.ts';
import { nextOffsets, partitionsOf } from '../batch-offsets.ts';
import type { StageOutput } from '../stage.ts';
import { checkDeclaredTopics, commitInfo, recordCommit, type Committer } from './committer.ts';
import type { WorkerContext } from './worker-context.ts';

/**
 * One transaction per batch: outputs, dead letters and input offsets commit together or not at all.
 * Transactional calls retry in place within the API timeout; anything else is thrown to the loop,
 * whose recovery plan aborts the transaction. A transaction that fails because Kafka refused some of
 * its records is aborted here and thrown as `RefusedOutputs`, naming the input records they came from.
 */
export class ExactlyOnceCommitter implements Committer {
  constructor(
    private readonly ctx: WorkerContext,
    private readonly stale: {
      abort(reason: string): Promise<void>;
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
    checkDeclaredTopics(ctx, outputs);
    const info = commitInfo(epoch, records, outputs, deadLetters);
    const s = ctx.session;
    const t0 = ctx.clock.now();
    await s.retryInPlace('begin-transaction', () => s.producer.beginTransaction());
    ctx.txnOpen = true;
    const produced: Produced[] = [
      ...outputs.map((output) => ({ output, ...(output.source ? { source: output.source } : {}) })),
      ...deadLetters.map((output) => ({ output })),
    ];
    try {
      return await this.#produceAndCommit(records, epoch, produced, info, t0);
    } catch (e) {
      const refused = await this.#refused(e);
      if (refused === undefined) throw (await this.#missingTopic(e, produced)) ?? this.#named(e);
      await this.stale.abort('refused');
      const own = await culprits(s.producer, refused, produced, ctx.o.kafka.apiTimeoutMs);
      const { failures, unattributed } = attributeRefused(own.length > 0 ? own : refused, produced, records);
      throw new RefusedOutputs(failures, unattributed);
    }
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

  /** A commit that failed for a topic (deleted, not writable) as the delivery error naming that topic. */
  #named(e: unknown): unknown {
    const err =
      e instanceof RetriesExhausted
        ? e.cause
        : e instanceof Error
          ? classifyKafkaError(e, 'commit-transaction')
          : undefined;
    if (err?.kind !== 'config' && err?.kind !== 'authorization') return e;
    const first = this.ctx.session.producer.tally().firstError;
    return first?.record !== undefined && first.kind === err.kind ? first : e;
  }

  /** The records Kafka refused when `e` says some were, each naming its index; undefined otherwise. */
  async #refused(e: unknown): Promise<KafkaError[] | undefined> {
    const err = e instanceof RetriesExhausted ? e.cause : classifyKafkaError(e, 'commit-transaction');
    if (err.kind !== 'refused') return undefined;
    if (err.record) return [err];
    // The commit failed with the refusal's code; the delivery reports say which records it was.
    const producer = this.ctx.session.producer;
    await awaitDeliveryReports(producer, this.ctx.o.kafka.apiTimeoutMs);
    const refused = producer.tally().refused;
    return refused.length > 0 ? refused : [err];
  }

  async #produceAndCommit(
    records: FetchedRecord[],
    epoch: number,
    produced: Produced[],
    info: ReturnType<typeof commitInfo>,
    t0: number,
  ): Promise<boolean> {
    const ctx = this.ctx;
    const s = ctx.session;
    for (const p of produced) await s.producer.produce(p.output);
    for (const c of ctx.stores?.changelogRecords() ?? []) await s.producer.produce(c);
    await ctx.hooks.beforeSendOffsets?.(info);
    // Last check before the offsets bind to this generation: a revoke may have arrived meanwhile.
    const stale = ctx.epochs.staleReason(epoch, partitionsOf(records));
    if (stale !== undefined) {
      await this.stale.abort('stale');
      await this.stale.discard(records, epoch, stale);
      return false;
    }
    await s.retryInPlace('send-offsets', () => s.producer.sendOffsets(nextOffsets(records), s.consumer));
    await ctx.hooks.beforeCommit?.(info);
    ctx.stores?.committing();
    await s.retryInPlace('commit-transaction', () => s.producer.commitTransaction());
    ctx.txnOpen = false;
    ctx.stores?.committed(s.producer.deliveredOffsets());
    recordCommit(ctx, produced.length, t0);
    await ctx.hooks.afterCommit?.(info);
    return true;
  }
}
