import { randomInt } from 'node:crypto';
import { createProducer, type ProducerPort } from '../kafka/producer.ts';
import type { Logger } from '../observability/logger.ts';
import {
  BATCH_FINISHED,
  type CommitInfo,
  type StageContext,
  type StageOutput,
  type WorkerHooks,
} from '../runtime/index.ts';
import {
  batchEventIndex,
  rowsOf,
  type BatchEventIdentity,
  type BatchObserver,
  type BatchPartition,
  type BatchSummary,
  type BatchTicket,
} from './batch-events.ts';
import { MONITORING_TOPIC_PREFIX, monitoringEvent } from './events.ts';
import type { WorkerBatchEvent } from './tables.ts';

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
 * idempotent producer (see the module comment for the identity and its trade-off). The worker's
 * `onAbort` hook does not say which batches an abort discarded, so it infers them (event `aborted`:
 * transaction aborted, batch discarded or worker recovered): offsets the stage processes again before any commit (the runtime rewinds to the
 * committed offsets after an abort), pieces older than the batch a commit covered, and whatever is
 * uncommitted at `stop()`. A re-run with a subset of the records of a piece that reported failures
 * is the runtime's re-run of the kept records, and consecutive disjoint pieces are a bisection: not
 * aborts. `stale` comes from the batch's signal firing with a reason other than the normal end.
 */
export class BatchEventEmitter implements BatchObserver {
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
      onRecovery: (info) => this.recovered(recoveryReason(info), info.epoch),
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

/**
 * The `reason` of a `recovered` row: the error and the operation it failed, the planned action and
 * its steps, the situation when it was not the loop (a failed abort), and why the worker stopped when
 * the plan stopped it.
 */
export function recoveryReason(info: Parameters<NonNullable<WorkerHooks['onRecovery']>>[0]): string {
  const steps = info.steps && info.steps.length > 0 ? ` [${info.steps.join(', ')}]` : '';
  const situation = info.situation ? ` after ${info.situation}` : '';
  const stopped = info.reason ? `: ${info.reason}` : '';
  return `${info.kind} ${info.code} on ${info.operation}${situation}: ${info.action}${steps}${stopped}`;
}
