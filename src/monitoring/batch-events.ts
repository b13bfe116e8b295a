import { randomInt } from 'node:crypto';
import { createProducer, type ProducerPort } from '../kafka/producer.ts';
import type { Logger } from '../observability/logger.ts';
import {
  BATCH_FINISHED,
  type CommitInfo,
  type ProcessResult,
  type Stage,
  type StageContext,
  type StageOutput,
  type StageRecord,
  type WorkerHooks,
} from '../runtime/index.ts';
import { MONITORING_TOPIC_PREFIX, monitoringEvent, monitoringTopic } from './events.ts';
import { WORKER_BATCH_EVENTS, type RowInput, type WorkerBatchEvent } from './tables.ts';

/**
 * Per-batch events of the runtime as `worker_batches` monitoring rows.
 *
 * - `committed` rides the batch's own transaction: {@link withBatchEvents} appends one row per input
 *   partition of the batch to the stage's outputs, so the row reaches `clickhouse_worker_batches`
 *   exactly when the batch's outputs and offsets commit, and never for an aborted transaction. Its
 *   identity is (input topic, partition, first offset of the batch in that partition, row_index 0):
 *   committed batches have disjoint offset ranges, so the identity is unique per committed
 *   batch-partition, and the agent's at-least-once replays collapse in ReplacingMergeTree.
 * - `consumed`, `aborted`, `stale` and `recovered` are by nature not part of a committed transaction.
 *   They go through {@link BatchEventEmitter}, a separate idempotent producer, at least once, with the
 *   identity (`__worker.<stage>.<instance>`, incarnation, sequence, row_index = event code): the
 *   incarnation is a random 31-bit number per emitter (process), the sequence counts the emitter's
 *   rows. Every emission is therefore a distinct row, and only a re-delivery of the same Kafka record
 *   (producer retry or agent replay) collapses. Trade-off: such a row is lost if the process dies
 *   before the producer delivered it (never duplicated visibly, but not exactly-once); an
 *   identity derived from the batch (topic/partition/first offset) would instead merge two genuine
 *   aborts of the same offsets into one row.
 */

/** Row index of each event type: its position in WORKER_BATCH_EVENTS (`committed` = 0). */
export function batchEventIndex(event: WorkerBatchEvent): number {
  return WORKER_BATCH_EVENTS.indexOf(event);
}

/** One input partition's part of a batch. */
export interface BatchPartition {
  topic: string;
  partition: number;
  firstOffset: number;
  lastOffset: number;
  records: number;
}

/** The partitions of a batch in first-seen order, with their offset ranges and record counts. */
export function batchPartitions(records: readonly Pick<StageRecord, 'topic' | 'partition' | 'offset'>[]) {
  const parts = new Map<string, BatchPartition>();
  for (const r of records) {
    const key = `${r.topic}\u0000${r.partition}`;
    const p = parts.get(key);
    if (!p)
      parts.set(key, {
        topic: r.topic,
        partition: r.partition,
        firstOffset: r.offset,
        lastOffset: r.offset,
        records: 1,
      });
    else {
      p.firstOffset = Math.min(p.firstOffset, r.offset);
      p.lastOffset = Math.max(p.lastOffset, r.offset);
      p.records += 1;
    }
  }
  return [...parts.values()];
}

/** Who writes the rows. */
export interface BatchEventIdentity {
  /** The stage's full name (default: the wrapped stage's name). */
  stage: string;
  instanceId: string;
  /** Consumer group (default: the stage name, as the worker's default). */
  groupId: string;
}

interface BatchSummary {
  event: WorkerBatchEvent;
  epoch: number;
  parts: BatchPartition[];
  outputs: number;
  deadLetters: number;
  reason?: string;
  at: number;
}

function rowsOf(who: BatchEventIdentity, b: BatchSummary): RowInput<'worker_batches'>[] {
  const batchRecords = b.parts.reduce((s, p) => s + p.records, 0);
  return b.parts.map((p) => ({
    stage: who.stage,
    instance_name: who.instanceId,
    consumer_group: who.groupId,
    event: b.event,
    epoch: b.epoch,
    topic: p.topic,
    partition: p.partition,
    first_offset: p.firstOffset,
    last_offset: p.lastOffset,
    records: p.records,
    batch_partitions: b.parts.length,
    batch_records: batchRecords,
    outputs: b.outputs,
    dead_letters: b.deadLetters,
    reason: b.reason ?? null,
    timestamp: b.at,
  }));
}

export interface BatchEventsOptions {
  instanceId: string;
  /** Default: the stage's name. */
  groupId?: string;
  /** Default `clickhouse_`; rows go to `<prefix>worker_batches`. */
  topicPrefix?: string;
  now?: () => number;
  /**
   * Out-of-transaction events (`consumed`, `aborted`, `stale`). Without it only `committed` rows are
   * written. Pass `emitter.hooks` to the worker so the emitter learns which batches committed.
   */
  emitter?: BatchEventEmitter;
}

/**
 * Wraps a stage so that every batch it commits also commits one `worker_batches` row per input
 * partition (event `committed`), in the same transaction as the batch's outputs and offsets.
 *
 * Columns: `records`, `first_offset`, `last_offset` of the partition; `batch_partitions`,
 * `batch_records`, `outputs` (the stage's outputs, rows excluded) and `dead_letters` (failures the
 * stage reported) of the whole batch. When the stage reports failures the rows carry no `source`,
 * so if the runtime holds back a retrying partition's tail it processes the kept records again and
 * the rows describe exactly what commits. Records the runtime dead-letters without processing
 * (delivery attempts exhausted) are not counted. When the runtime bisects a batch (the stage threw),
 * each processed piece adds its rows: a partition is then described by several rows with adjacent
 * offset ranges, all in the same transaction.
 *
 * In at-least-once mode (sinks) the rows are produced before the offsets commit: a crash in
 * between replays the batch, and only a replay with the same first offset collapses.
 */
export function withBatchEvents(stage: Stage, o: BatchEventsOptions): Stage {
  const prefix = o.topicPrefix ?? MONITORING_TOPIC_PREFIX;
  const topic = monitoringTopic('worker_batches', prefix);
  const now = o.now ?? Date.now;
  const who: BatchEventIdentity = {
    stage: stage.name,
    instanceId: o.instanceId,
    groupId: o.groupId ?? stage.name,
  };
  const wrapped: Stage = {
    name: stage.name,
    inputTopics: stage.inputTopics,
    outputTopics: stage.outputTopics === 'any' ? 'any' : [...stage.outputTopics, topic],
    async process(records: readonly StageRecord[], ctx: StageContext): Promise<ProcessResult> {
      const parts = batchPartitions(records);
      const ticket = o.emitter?.processing(parts, ctx);
      const result = await stage.process(records, ctx);
      const failures = result.failures ?? [];
      const summary: BatchSummary = {
        event: 'committed',
        epoch: ctx.epoch,
        parts,
        outputs: result.outputs.length,
        deadLetters: failures.length,
        at: now(),
      };
      if (ticket) o.emitter?.processed(ticket, summary, failures.length > 0);
      const rows: StageOutput[] = rowsOf(who, summary).map((row, i) => {
        const p = parts[i]!;
        const out = monitoringEvent(
          'worker_batches',
          { topic: p.topic, partition: p.partition, offset: p.firstOffset },
          batchEventIndex('committed'),
          row,
          prefix,
        );
        return failures.length > 0
          ? out
          : { ...out, source: { topic: p.topic, partition: p.partition, offset: p.firstOffset } };
      });
      return { ...result, outputs: [...result.outputs, ...rows] };
    },
  };
  if (stage.shortName !== undefined) Object.assign(wrapped, { shortName: stage.shortName });
  if (stage.isRetryable) {
    const isRetryable = stage.isRetryable.bind(stage);
    Object.assign(wrapped, { isRetryable });
  }
  return wrapped;
}

/** One batch handed to the stage, as the emitter tracks it. */
export interface BatchTicket {
  /** Settled: processed (awaiting commit) or reported stale. */
  done: boolean;
}

/** Where the emitter sends rows: a producer, or (tests) any function. */
export type RowSink = (output: StageOutput) => Promise<void>;

export interface BatchEventEmitterOptions {
  stage: string;
  instanceId: string;
  groupId?: string;
  topicPrefix?: string;
  /** Default: an idempotent (non-transactional) producer to `bootstrapServers`. */
  sink?: RowSink;
  bootstrapServers?: string;
  log: Logger;
  now?: () => number;
  /** Also write a `consumed` row per batch handed to the stage (default false: one row per batch more). */
  consumed?: boolean;
  /** Default: a random positive 31-bit number. */
  incarnation?: number;
}

/**
 * Writes the batch events that cannot ride a committed transaction, at least once, through its own
 * idempotent producer (see the module comment for the identity and its trade-off). Without a runtime
 * hook for aborts it infers them (event `aborted`: transaction aborted, batch discarded or worker
 * recovered): offsets the stage processes again before any commit (the runtime rewinds to the
 * committed offsets after an abort), pieces older than the batch a commit covered, and whatever is
 * uncommitted at `stop()`. A re-run with a subset of the records of a piece that reported failures
 * is the runtime's re-run of the kept records, and consecutive disjoint pieces are a bisection: not
 * aborts. `stale` comes from the batch's signal firing with a reason other than the normal end.
 */
export class BatchEventEmitter {
  readonly incarnation: number;
  readonly #o: BatchEventEmitterOptions;
  readonly #who: BatchEventIdentity;
  readonly #topicSource: string;
  readonly #now: () => number;
  #seq = 0;
  #producer: ProducerPort | undefined;
  #sink: RowSink | undefined;
  /** Pieces the stage processed since the last commit (a batch, its bisected parts, its re-run). */
  #pieces: (BatchSummary & { hadFailures: boolean })[] = [];
  #inflight: Promise<void>[] = [];
  /** Rows handed to the sink, by event (diagnostics and tests). */
  readonly emitted = new Map<WorkerBatchEvent, number>();

  constructor(o: BatchEventEmitterOptions) {
    this.#o = o;
    this.#who = { stage: o.stage, instanceId: o.instanceId, groupId: o.groupId ?? o.stage };
    this.#topicSource = `__worker.${o.stage}.${o.instanceId}`;
    this.#now = o.now ?? Date.now;
    this.incarnation = o.incarnation ?? randomInt(1, 2 ** 31 - 1);
    this.#sink = o.sink;
  }

  /** Connects the producer (when no sink was given). */
  async start(): Promise<void> {
    if (this.#sink) return;
    if (!this.#o.bootstrapServers) throw new Error('BatchEventEmitter needs bootstrapServers or a sink');
    const p = createProducer(
      {
        bootstrapServers: this.#o.bootstrapServers,
        clientId: `${this.#o.stage}-${this.#o.instanceId}-batch-events`,
        transactionTimeoutMs: 60_000,
        messageTimeoutMs: 60_000,
        apiTimeoutMs: 30_000,
      },
      this.#o.log,
    );
    await p.connect(30_000);
    this.#producer = p;
    this.#sink = (out) => p.produce(out);
  }

  /** Waits for queued rows (bounded), then closes the producer. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.#notCommitted(this.#pieces);
    this.#pieces = [];
    await Promise.allSettled(this.#inflight);
    if (this.#producer) {
      await this.#producer.flush(timeoutMs).catch(() => undefined);
      await this.#producer.close(timeoutMs);
      this.#producer = undefined;
    }
  }

  /** Worker hooks: pass as `hooks` (or merge into yours). */
  get hooks(): WorkerHooks {
    return {
      afterCommit: (info) => this.committed(info),
      onRecovery: (info) => this.recovered(`${info.kind} ${info.code}: ${info.action}`, info.epoch),
    };
  }

  /**
   * The worker committed a batch: the newest pieces, as many as hold `info.records` records (a
   * bisected batch is several consecutive pieces). Older pieces were processed and never committed
   * (e.g. discarded as stale after `process` returned).
   */
  committed(info: CommitInfo): void {
    let i = this.#pieces.length;
    for (let sum = 0; i > 0 && sum < info.records;) {
      i -= 1;
      sum += this.#pieces[i]!.parts.reduce((s, p) => s + p.records, 0);
    }
    this.#notCommitted(this.#pieces.slice(0, i));
    this.#pieces = [];
  }

  /** Writes a `recovered` row (the worker's `onRecovery` hook calls it through `hooks`). */
  recovered(reason: string, epoch: number): void {
    this.#emit({ event: 'recovered', epoch, parts: [], outputs: 0, deadLetters: 0, reason, at: this.#now() });
  }

  /** Called by withBatchEvents before the stage processes a batch; pass the result to `processed`. */
  processing(parts: BatchPartition[], ctx: StageContext): BatchTicket {
    // Offsets processed again before a commit: the earlier attempt did not commit (the runtime rewinds
    // to the committed offsets after an abort), unless this is the re-run of the kept records of a
    // piece that reported failures.
    const i = this.#pieces.findIndex((piece) => overlaps(piece.parts, parts));
    if (i >= 0) {
      const prev = this.#pieces[i]!;
      const rerun = prev.hadFailures && parts.every((p) => prev.parts.some((q) => contains(q, p)));
      if (rerun) this.#pieces.splice(i, 1);
      else {
        this.#notCommitted(this.#pieces);
        this.#pieces = [];
      }
    }
    if (this.#o.consumed)
      this.#emit({ event: 'consumed', epoch: ctx.epoch, parts, outputs: 0, deadLetters: 0, at: this.#now() });
    const ticket: BatchTicket = { done: false };
    ctx.signal.addEventListener(
      'abort',
      () => {
        const reason: unknown = ctx.signal.reason;
        const text = reason instanceof Error ? reason.message : String(reason);
        // The runtime ends every batch's signal with BATCH_FINISHED; anything else made it stale.
        if (ticket.done || text === BATCH_FINISHED) return;
        ticket.done = true;
        this.#emit({
          event: 'stale',
          epoch: ctx.epoch,
          parts,
          outputs: 0,
          deadLetters: 0,
          reason: text,
          at: this.#now(),
        });
      },
      { once: true },
    );
    return ticket;
  }

  /** Called by withBatchEvents after the stage returned: the batch now awaits its commit. */
  processed(ticket: BatchTicket, summary: BatchSummary, hadFailures: boolean): void {
    if (ticket.done) return;
    ticket.done = true;
    this.#pieces.push({ ...summary, hadFailures });
  }

  #notCommitted(pieces: readonly BatchSummary[]): void {
    for (const p of pieces)
      this.#emit({
        ...p,
        event: 'aborted',
        reason: 'not committed (transaction aborted, batch discarded or worker recovered)',
        at: this.#now(),
      });
  }

  #emit(b: BatchSummary): void {
    const rows =
      b.parts.length > 0
        ? rowsOf(this.#who, b)
        : [
            {
              ...rowsOf(this.#who, {
                ...b,
                parts: [{ topic: '', partition: -1, firstOffset: -1, lastOffset: -1, records: 0 }],
              })[0]!,
              batch_partitions: 0,
            },
          ];
    this.emitted.set(b.event, (this.emitted.get(b.event) ?? 0) + rows.length);
    const sink = this.#sink;
    for (const row of rows) {
      const seq = this.#seq;
      this.#seq += 1;
      const out = monitoringEvent(
        'worker_batches',
        { topic: this.#topicSource, partition: this.incarnation, offset: seq },
        batchEventIndex(b.event),
        row,
        this.#o.topicPrefix ?? MONITORING_TOPIC_PREFIX,
      );
      if (!sink) continue;
      const sent = sink(out).catch((e: unknown) =>
        this.#o.log.warn({ err: String(e), event: b.event }, 'batch events: row not sent'),
      );
      this.#inflight.push(sent);
      void sent.finally(() => {
        this.#inflight = this.#inflight.filter((x) => x !== sent);
      });
    }
  }
}

function overlaps(a: readonly BatchPartition[], b: readonly BatchPartition[]): boolean {
  return a.some((p) =>
    b.some(
      (q) =>
        p.topic === q.topic &&
        p.partition === q.partition &&
        p.firstOffset <= q.lastOffset &&
        q.firstOffset <= p.lastOffset,
    ),
  );
}

function contains(outer: BatchPartition, inner: BatchPartition): boolean {
  return (
    outer.topic === inner.topic &&
    outer.partition === inner.partition &&
    inner.firstOffset >= outer.firstOffset &&
    inner.lastOffset <= outer.lastOffset
  );
}
