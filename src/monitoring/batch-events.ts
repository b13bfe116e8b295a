import type { ProcessResult, Stage, StageContext, StageOutput, StageRecord } from '../runtime/index.ts';
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
 *   They go through `BatchEventEmitter` (batch-event-emitter.ts), a separate idempotent producer, at least once, with the
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

export interface BatchSummary {
  event: WorkerBatchEvent;
  epoch: number;
  parts: BatchPartition[];
  outputs: number;
  deadLetters: number;
  reason?: string;
  at: number;
}

export function rowsOf(who: BatchEventIdentity, b: BatchSummary): RowInput<'worker_batches'>[] {
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

/** One batch handed to the stage, as an observer tracks it. */
export interface BatchTicket {
  /** Settled: processed (awaiting commit) or reported stale. */
  done: boolean;
}

/**
 * What {@link withBatchEvents} tells about each batch besides its committed rows: the batch reached
 * the stage, and the stage returned. `BatchEventEmitter` is the implementation that writes rows.
 */
export interface BatchObserver {
  processing(parts: BatchPartition[], ctx: StageContext): BatchTicket;
  processed(ticket: BatchTicket, summary: BatchSummary, hadFailures: boolean): void;
}

export interface BatchEventsOptions {
  instanceId: string;
  /** Default: the stage's name. */
  groupId?: string;
  /** Default `clickhouse_`; rows go to `<prefix>worker_batches`. */
  topicPrefix?: string;
  now?: () => number;
  /**
   * Out-of-transaction events (`consumed`, `aborted`, `stale`): a `BatchEventEmitter`. Without it only
   * `committed` rows are written. Pass `emitter.hooks` to the worker so the emitter learns which
   * batches committed.
   */
  emitter?: BatchObserver;
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
        if (failures.length === 0)
          out.source = { topic: p.topic, partition: p.partition, offset: p.firstOffset };
        return out;
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
