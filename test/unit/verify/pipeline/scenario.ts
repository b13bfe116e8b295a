import type { TableName } from '../../../../src/monitoring/tables.ts';
import { DETECTOR_STAGE } from '../../../../src/stages/detector/index.ts';
import {
  BATCH_HANDLER_STAGE,
  COLLECTOR_STAGE,
  INSPECTOR_STAGE,
  PREFILTER_STAGE,
  loglineId as collectorLineId,
  type Alert,
  type Batch,
  type LogLine,
} from '../../../../src/stages/index.ts';
import type { PipelineLayout } from '../../../../src/verify/pipeline/layout.ts';
import type { InputLine } from '../../../../src/verify/pipeline/line-fates.ts';
import {
  batchIds,
  type AlertRecord,
  type LineRecord,
  type MonitoringRow,
  type PipelineRead,
  type Position,
} from '../../../../src/verify/pipeline/records.ts';

/** A batch record as the scenario made it: the whole batch, not only the ids the accounting reads. */
export interface FullBatchRecord extends Position {
  readonly batch: Batch;
}

/** One collector, one path, one alerter: the smallest pipeline with every fate. */
export const LAYOUT: PipelineLayout = {
  logserverInputs: ['in'],
  collectors: [
    {
      name: 'c',
      input: 'c-in',
      paths: [
        {
          name: 'c/p/i/d',
          prefilter: 'p',
          inspector: 'i',
          detector: 'd',
          prefilterInput: 'p-in',
          inspectorInput: 'i-in',
          detectorInput: 'd-in',
          alerterInputs: [{ alerter: 'generic', topic: 'a-in' }],
          alertersAdjust: false,
        },
      ],
    },
  ],
  externalAlerts: undefined,
};

/**
 * Plays the stages by hand: each step writes the records and the monitoring rows the real stage
 * writes for it, so a test changes only what its title is about.
 */
export class Scenario {
  readonly input: InputLine[] = [];
  readonly lines: LineRecord[] = [];
  /** Whole batches (the scenario derives the next stage's from them); read() gives their ids. */
  readonly batches: FullBatchRecord[] = [];
  readonly alerts: AlertRecord[] = [];
  readonly rows = new Map<TableName, MonitoringRow[]>();
  readonly #offsets = new Map<string, number>();
  /** Where the collector read each line: a record, or a frame and the line's index there. */
  readonly #collected = new Map<number, LineAt>();

  /** Line `id` comes in and the logserver forwards it to the collector. */
  arrive(id: number, valid = true): this {
    this.input.push({ id, valid });
    const at = this.#at('in');
    this.lines.push({ ...at, line: id });
    this.row('server_logs', at, {});
    this.row('server_logs_timestamps', at, {});
    const forwarded = this.#at('c-in');
    this.lines.push({ ...forwarded, line: id });
    this.#collected.set(id, forwarded);
    return this;
  }

  /** Lines `ids` come in and the logserver forwards them to the collector as one frame. */
  arriveFramed(ids: readonly number[], valid = true): this {
    const frame = this.#at('c-in');
    ids.forEach((id, index) => {
      this.input.push({ id, valid });
      const at = this.#at('in');
      this.lines.push({ ...at, line: id });
      this.row('server_logs', at, {});
      this.row('server_logs_timestamps', at, {});
      this.lines.push({ ...frame, index, line: id });
      this.#collected.set(id, { ...frame, index });
    });
    return this;
  }

  /** The collector rejects line `id`; `index`: the row's index, when not the line's own. */
  reject(id: number, index = this.#source(id).index ?? 0): this {
    this.row('failed_loglines', this.#source(id), { reason_for_failure: 'bad' }, index);
    return this;
  }

  /** The collector sends a batch of `ids` (new) with `context` (carried over from its last batch). */
  collect(ids: readonly number[], context: readonly number[] = []): FullBatchRecord {
    const batch = this.batch('p-in', `batch-${ids.join('-')}`, ids, context);
    for (const id of ids) {
      const source = this.#source(id);
      const index = source.index ?? 0;
      this.row('loglines', source, { logline_id: loglineId(this.#source(id)) }, index);
      this.row('logline_timestamps', source, this.#stamp(id, COLLECTOR_STAGE, 'in_process'), 2 * index);
      this.row('logline_timestamps', source, this.#stamp(id, BATCH_HANDLER_STAGE, 'batched'), 2 * index + 1);
      this.row(
        'logline_to_batches',
        source,
        { logline_id: loglineId(source), batch_id: batch.batch.batch_id },
        index,
      );
    }
    const last = this.#source(ids[ids.length - 1] ?? -1);
    const lastRow = this.#batchRow(batch, BATCH_HANDLER_STAGE, 'completed', 'c');
    this.row('batch_timestamps', last, lastRow, last.index ?? 0);
    return batch;
  }

  /** The prefilter keeps `keep` of the batch's lines and sends them on when one is its own. */
  prefilter(input: FullBatchRecord, keep: readonly number[]): FullBatchRecord | undefined {
    this.row('batch_timestamps', input, this.#batchRow(input, PREFILTER_STAGE, 'in_process', 'p'));
    const context = this.#context(input);
    const own = this.#own(input);
    for (const id of own)
      if (!keep.includes(id))
        this.emit('logline_timestamps', input, this.#stamp(id, PREFILTER_STAGE, 'filtered_out'));
    if (!own.some((id) => keep.includes(id))) return undefined;
    return this.batch(
      'i-in',
      input.batch.batch_id,
      own.filter((id) => keep.includes(id)),
      context.filter((id) => keep.includes(id)),
    );
  }

  /** The inspector finishes `normal` and sends `suspicious` on as one suspicious batch. */
  inspect(
    input: FullBatchRecord,
    normal: readonly number[],
    suspicious: readonly number[],
  ): FullBatchRecord | undefined {
    this.row('batch_timestamps', input, this.#batchRow(input, INSPECTOR_STAGE, 'in_process', 'i'));
    for (const id of normal)
      this.emit('logline_timestamps', input, this.#stamp(id, INSPECTOR_STAGE, 'finished'));
    if (suspicious.length === 0) return undefined;
    const sent = this.batch('d-in', `suspicious-${input.batch.batch_id}`, suspicious);
    this.emit('suspicious_batch_timestamps', input, {
      suspicious_batch_id: sent.batch.batch_id,
      stage: INSPECTOR_STAGE,
      status: 'in_process',
      instance_name: 'i',
    });
    return sent;
  }

  /** The detector scores the suspicious batch and raises one alert for `alerted`, if any. */
  detect(input: FullBatchRecord, alerted: readonly number[] = []): AlertRecord | undefined {
    this.emit('suspicious_batch_timestamps', input, {
      suspicious_batch_id: input.batch.batch_id,
      stage: DETECTOR_STAGE,
      status: alerted.length > 0 ? 'detected' : 'finished',
      instance_name: 'd',
    });
    for (const id of this.#own(input))
      this.emit(
        'logline_timestamps',
        input,
        this.#stamp(id, DETECTOR_STAGE, alerted.includes(id) ? 'detected' : 'finished'),
      );
    if (alerted.length === 0) return undefined;
    const alert: Alert = {
      overall_score: 1,
      result: alerted.map((id) => ({ request: this.logLine(id), probability: 1 })),
      src_ip: this.logLine(alerted[0] ?? -1).src_ip,
      alert_timestamp: '2026-11-30T10:00:00.000Z',
      suspicious_batch_id: input.batch.batch_id,
      detector_name: 'd',
      window_start: '2026-11-30T10:00:00.000Z',
    };
    const record = { ...this.#at('a-in'), alert };
    this.alerts.push(record);
    this.emit('alerts', input, {
      client_ip: alert.src_ip,
      suspicious_batch_id: alert.suspicious_batch_id,
      result: JSON.stringify(alert.result),
    });
    return record;
  }

  /** A batch record on `topic`: `ids` as its own lines, `context` as context lines. */
  batch(
    topic: string,
    batchId: string,
    ids: readonly number[],
    context: readonly number[] = [],
  ): FullBatchRecord {
    const data = [...context, ...ids].map((id) => this.logLine(id));
    const batch: Batch = {
      batch_tree_row_id: `row-${batchId}`,
      batch_id: batchId,
      begin_timestamp: data[0]?.ts ?? '',
      end_timestamp: data[data.length - 1]?.ts ?? '',
      data,
      ...(context.length > 0
        ? { context_logline_ids: context.map((id) => this.logLine(id).logline_id) }
        : {}),
    };
    const record = { ...this.#at(topic), batch };
    this.batches.push(record);
    return record;
  }

  /** The same record produced again at the next offset of its topic. */
  again<T extends FullBatchRecord | AlertRecord>(record: T): T {
    const copy = { ...record, ...this.#at(record.topic) };
    if ('batch' in copy) this.batches.push(copy);
    else this.alerts.push(copy);
    return copy;
  }

  logLine(id: number): LogLine {
    const host = `10.0.0.${id}`;
    return {
      logline_id: loglineId(this.#source(id)),
      subnet_id: '10.0.0.0_24',
      ts: `2026-11-30T10:00:${String(id % 60).padStart(2, '0')}.000000Z`,
      src_ip: host,
      verify_line: id,
    };
  }

  /** A row about `source` numbered `index`. */
  row(table: TableName, source: Position, payload: Record<string, unknown>, index = 0): void {
    const row = {
      src_topic: source.topic,
      src_partition: source.partition,
      src_offset: source.offset,
      row_index: index,
      ...payload,
    };
    this.rows.set(table, [...(this.rows.get(table) ?? []), row]);
  }

  /** A row about `source`, numbered after the rows of this table the source already has. */
  emit(table: TableName, source: Position, payload: Record<string, unknown>): void {
    const same = (this.rows.get(table) ?? []).filter(
      (r) =>
        r.src_topic === source.topic &&
        r.src_partition === source.partition &&
        r.src_offset === source.offset,
    );
    this.row(table, source, payload, same.length);
  }

  /** What a read of the run gives: the fate tables as committed, and every row in ClickHouse. */
  read(): PipelineRead {
    const all = Object.fromEntries(this.rows);
    return {
      layout: LAYOUT,
      records: {
        lines: this.lines,
        batches: this.batches.map((r) => ({ ...r, batch: batchIds(r.batch) })),
        alerts: this.alerts,
        undecodable: [],
      },
      committedRows: {
        failed_loglines: all.failed_loglines ?? [],
        logline_timestamps: all.logline_timestamps ?? [],
      },
      clickhouseRows: all,
    };
  }

  #at(topic: string): Position {
    const offset = this.#offsets.get(topic) ?? 0;
    this.#offsets.set(topic, offset + 1);
    return { topic, partition: 0, offset };
  }

  #source(id: number): LineAt {
    return this.#collected.get(id) ?? { topic: 'c-in', partition: 0, offset: -1 };
  }

  #stamp(id: number, stage: string, status: string): Record<string, unknown> {
    return { logline_id: loglineId(this.#source(id)), stage, status };
  }

  #batchRow(
    record: FullBatchRecord,
    stage: string,
    status: string,
    instance: string,
  ): Record<string, unknown> {
    return { batch_id: record.batch.batch_id, stage, status, instance_name: instance };
  }

  #own(record: FullBatchRecord): number[] {
    const context = new Set(record.batch.context_logline_ids ?? []);
    return record.batch.data.filter((l) => !context.has(l.logline_id)).map((l) => Number(l.verify_line));
  }

  #context(record: FullBatchRecord): number[] {
    const context = new Set(record.batch.context_logline_ids ?? []);
    return record.batch.data.filter((l) => context.has(l.logline_id)).map((l) => Number(l.verify_line));
  }
}

/** Where the collector read a line: its record, and its index when the record was a frame. */
type LineAt = Position & { readonly index?: number };

/** The collector's logline_id of the line it read at `p`. */
export function loglineId(p: LineAt): string {
  const { topic, partition, offset, index } = p;
  return collectorLineId(index === undefined ? p : { topic, partition, offset, line: index });
}
