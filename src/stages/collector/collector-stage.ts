import type { HamstringConfig } from '../../config/index.ts';
import { MonitoringRowBatch } from '../../monitoring/row-batch.ts';
import type { TableName } from '../../monitoring/tables.ts';
import {
  systemClock,
  type Clock,
  type ProcessResult,
  type RecordPosition,
  type Stage,
  type StageContext,
  type StageOutput,
  type StageRecord,
  type TimerContext,
} from '../../runtime/index.ts';
import { loglineId } from '../ids.ts';
import { linesOf, type LinePosition } from '../line-frames.ts';
import { isoFromMicros } from '../messages.ts';
import { subnetId } from '../subnet.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { BATCH_HANDLER_STAGE, BATCH_STORE, BatchBuffer, lineBudget, type SentBatch } from './batch-buffer.ts';
import { batchStoreCodec } from './batch-store-codec.ts';
import { collectorSettings, type CollectorSettings } from './collector-settings.ts';
import {
  compileLineValidator,
  DEFAULT_MAX_JSON_DEPTH,
  type LineValidator,
  type LineVerdict,
} from './line-validation.ts';
import { textCost, type ContextLine } from './stored-lines.ts';

export const COLLECTOR_STAGE = 'log_collection.collector';

const TABLES: readonly TableName[] = [
  'failed_loglines',
  'loglines',
  'logline_timestamps',
  'logline_to_batches',
  'batch_timestamps',
  'batch_tree',
  'fill_levels',
];

/** How often a timer call that sent nothing still records the collector's fill level. */
const FILL_LEVEL_PERIOD_MS = 5000;

/** Longest `message_text` of a `failed_loglines` row: a hostile line is recorded, not copied whole. */
const MAX_FAILED_TEXT = 4096;

export interface CollectorStageOptions {
  readonly config: HamstringConfig;
  /** `pipeline.log_collection.collectors[].name` of the collector this stage runs. */
  readonly collectorName: string;
  readonly clock?: Clock;
  /** Default `clickhouse_`. */
  readonly monitoringTopicPrefix?: string;
}

/** What every call of one collector uses, resolved once from the config. */
interface Collector {
  readonly name: string;
  /** `<batch_sender_to_prefilter>-<prefilter>` of every prefilter of this collector. */
  readonly targets: readonly string[];
  readonly settings: CollectorSettings;
  /** The most a line may take in a batch: half of what `max_batch_bytes` allows. */
  readonly budget: number;
  readonly validate: LineValidator;
  readonly clock: Clock;
  readonly prefix: string | undefined;
}

/**
 * The collector of one `log_collection.collectors` entry: validates each line of
 * `<logserver_to_collector>-<name>`, records failed ones, batches valid ones per subnet in the
 * `batches` store and sends each batch to `<batch_sender_to_prefilter>-<prefilter>` of every
 * prefilter of this collector, keyed by subnet_id: when it is full at once, otherwise from the timer
 * once it has waited `batch_timeout`.
 */
export function createCollectorStage(options: CollectorStageOptions): Stage {
  const c = collectorOf(options);
  /** `process` looks for due batches at most once per half timer interval and partition. */
  const dueScan = perPartitionThrottle(c.settings.timerIntervalMs / 2);
  /** The timer drops expired context at most once per batch timeout and partition. */
  const contextSweep = perPartitionThrottle(c.settings.buffer.timeoutMs);
  /** The last fill-level period each partition's timer wrote (a throttle: after a restart it writes at once). */
  const fillPeriods = new Map<number, number>();
  return {
    name: COLLECTOR_STAGE,
    shortName: 'collector',
    inputTopics: [pipelineTopic(options.config, 'logserver_to_collector', c.name)],
    outputTopics: [...c.targets, ...monitoringTopics(TABLES, c.prefix)],
    stores: { [BATCH_STORE]: { codec: batchStoreCodec } },
    timer: { intervalMs: c.settings.timerIntervalMs },
    process: (records, ctx) => processLines(c, records, ctx, dueScan),
    onTimer: (ctx) => timerCall(c, ctx, contextSweep, fillPeriods),
  };
}

function collectorOf(options: CollectorStageOptions): Collector {
  const { config, collectorName } = options;
  const collector = config.pipeline.log_collection.collectors.find((entry) => entry.name === collectorName);
  if (!collector)
    throw new Error(`no collector named "${collectorName}" in pipeline.log_collection.collectors`);
  const settings = collectorSettings(config, collector);
  return {
    name: collectorName,
    targets: config.pipeline.log_filtering
      .filter((prefilter) => prefilter.collector_name === collectorName)
      .map((prefilter) => pipelineTopic(config, 'batch_sender_to_prefilter', prefilter.name)),
    settings,
    budget: lineBudget(settings.buffer),
    validate: compileLineValidator(
      collector.required_log_information,
      { maxLineBytes: collector.max_line_bytes, maxDepth: DEFAULT_MAX_JSON_DEPTH },
      collector.optional_log_information,
    ),
    clock: options.clock ?? systemClock,
    prefix: options.monitoringTopicPrefix,
  };
}

/** A `process` call: each valid line into its partition's buffer, full and due batches out. */
function processLines(
  c: Collector,
  records: readonly StageRecord[],
  ctx: StageContext,
  dueScan: (partition: number, now: number) => boolean,
): ProcessResult {
  const outputs: StageOutput[] = [];
  const rows = new MonitoringRowBatch(c.prefix);
  const buffers = new Map<number, BatchBuffer>();
  for (const record of records) {
    const { lines, framed } = linesOf(record);
    const { topic, partition, offset } = record;
    for (let i = 0; i < lines.length; i++) {
      const now = c.clock.now();
      const value = lines[i]!;
      const at: LinePosition = framed ? { topic, partition, offset, line: i } : record;
      const valid = lineRows(c, at, value, c.validate(value), now, rows);
      if (!valid) continue;
      let buffer = buffers.get(partition);
      if (!buffer) {
        buffer = new BatchBuffer(ctx.state(partition).store(BATCH_STORE), c.settings.buffer);
        buffers.set(partition, buffer);
      }
      for (const sent of buffer.add(valid.subnet, valid.line, at, now, valid.cost))
        outputs.push(...batchOutputs(c, sent, now, rows, record));
    }
  }
  // Batches whose timeout passed leave now rather than with the next timer call, but the scan of
  // every open batch runs at most once per half timer interval and partition: run per call, it
  // cost a busy collector a fifth of its time. Only how late a due batch leaves depends on it.
  const now = c.clock.now();
  for (const [partition, buffer] of buffers) {
    if (!dueScan(partition, now)) {
      buffer.flush();
      continue;
    }
    for (const sent of buffer.due(now)) outputs.push(...batchOutputs(c, sent, now, rows));
  }
  outputs.push(...rows.outputs());
  return { outputs };
}

/** A timer call: due batches out, stale context dropped, and the fill level once per period. */
function timerCall(
  c: Collector,
  ctx: TimerContext,
  contextSweep: (partition: number, now: number) => boolean,
  fillPeriods: Map<number, number>,
): ProcessResult {
  const buffer = new BatchBuffer(ctx.state.store(BATCH_STORE), c.settings.buffer);
  const rows = new MonitoringRowBatch(c.prefix);
  const outputs = buffer.due(ctx.now).flatMap((sent) => batchOutputs(c, sent, ctx.now, rows));
  // Context expires after ten timeouts; a sweep once per timeout is exact enough and spares a
  // scan of every subnet's context in each timer call.
  if (contextSweep(ctx.partition, ctx.now)) buffer.forgetStaleContext(ctx.now);
  // The fill level once per period, or when batches left: a call with nothing to say writes
  // nothing, so an idle collector commits no transaction per timer call.
  // Which period was reported is remembered, not inferred from the timer interval: timer calls
  // come late (a commit-interval span delays them), and a late first call of a period looked
  // like its second, so whole periods went without a fill level.
  const period = Math.floor(ctx.now / FILL_LEVEL_PERIOD_MS);
  const reported = fillPeriods.get(ctx.partition) === period;
  if (outputs.length === 0 && reported) {
    outputs.push(...rows.outputs());
    return { outputs };
  }
  // No input record: the row's identity is the timer call's (stage, collector, partition, time).
  const source = {
    topic: `__timer.${COLLECTOR_STAGE}.${c.name}`,
    partition: ctx.partition,
    offset: ctx.now,
  };
  const fill = buffer.fill();
  rows.add('fill_levels', source, 0, {
    timestamp: ctx.now,
    stage: BATCH_HANDLER_STAGE,
    entry_type: 'total_loglines',
    entry_count: fill.lines,
  });
  rows.add('fill_levels', source, 1, {
    timestamp: ctx.now,
    stage: BATCH_HANDLER_STAGE,
    entry_type: 'open_batches',
    entry_count: fill.batches,
  });
  fillPeriods.set(ctx.partition, period);
  outputs.push(...rows.outputs());
  return { outputs };
}

/** A sent batch's records to the prefilters; its monitoring rows go to `rows`. */
function batchOutputs(
  c: Collector,
  sent: SentBatch,
  now: number,
  rows: MonitoringRowBatch,
  source?: RecordPosition,
): StageOutput[] {
  const outputs: StageOutput[] = c.targets.map((topic) => ({
    topic,
    key: sent.subnet,
    value: sent.value,
    ...(source ? { source } : {}),
  }));
  const common = { stage: BATCH_HANDLER_STAGE, instance_name: c.name, timestamp: now };
  // A batch's rows are about its last line, a line's about the line: a line of a frame numbers its
  // rows by its index there, as no two lines of a record share a row (see lineRows).
  const last = sent.lastSource.line ?? 0;
  rows.add('batch_timestamps', sent.lastSource, last, {
    ...common,
    batch_id: sent.batchId,
    status: 'completed',
    is_active: true,
    message_count: sent.size,
  });
  rows.add('batch_tree', sent.lastSource, last, {
    ...common,
    batch_row_id: sent.batchTreeRowId,
    status: 'completed',
    parent_batch_row_id: null,
    batch_id: sent.batchId,
  });
  for (const stored of sent.lines)
    rows.add('logline_to_batches', stored.source, stored.source.line ?? 0, {
      logline_id: stored.id,
      batch_id: sent.batchId,
    });
  return outputs;
}

/**
 * Records a line's monitoring rows in `rows`; returns the line and its batch cost when it is valid.
 * A line too large for half a batch is a failed line: sent, Kafka would refuse its batch.
 *
 * A line read from a frame (`at.line` set) has that index in its id, and row indexes of its own in
 * each table (`loglines` and `failed_loglines` the index, `logline_timestamps` twice it and the
 * next): rows are identified by their record's position and their index. A line that was a record
 * of its own keeps the id and the rows it had before frames.
 */
function lineRows(
  c: Collector,
  at: LinePosition,
  value: Buffer,
  verdict: LineVerdict,
  now: number,
  rows: MonitoringRowBatch,
): { subnet: string; line: ContextLine; cost: number } | undefined {
  const subnet = verdict.ok ? subnetId(verdict.srcIp, c.settings.subnet) : undefined;
  const index = at.line ?? 0;
  const line =
    verdict.ok && subnet !== undefined && verdict.tsMicros >= 0
      ? lineText(verdict.fields, verdict.tsMicros, loglineId(at), subnet)
      : undefined;
  const cost = line ? textCost(line) : 0;
  const problem = !verdict.ok
    ? verdict.reason
    : verdict.tsMicros < 0
      ? 'field "ts": before 1970'
      : cost > c.budget
        ? `line takes ${cost} bytes in a batch, more than half of max_batch_bytes allows (${c.budget})`
        : undefined;
  if (problem !== undefined || !verdict.ok || subnet === undefined || !line) {
    const text = value.subarray(0, MAX_FAILED_TEXT).toString('utf8');
    rows.add('failed_loglines', at, index, {
      message_text: text,
      timestamp_in: now,
      timestamp_failed: now,
      reason_for_failure: problem ?? 'field "src_ip": no subnet',
    });
    return undefined;
  }
  const { status_code, record_type } = verdict.fields;
  rows.add('loglines', at, index, {
    logline_id: line.id,
    subnet_id: subnet,
    timestamp: Math.floor(verdict.tsMicros / 1000),
    status: typeof status_code === 'string' ? status_code : '',
    client_ip: verdict.srcIp,
    record_type: typeof record_type === 'string' ? record_type : '',
    additional_fields: JSON.stringify(copyFields(verdict.fields, ROW_COLUMNS)),
  });
  stampLine(rows, at, line.id, now, COLLECTOR_STAGE, 'in_process', 2 * index);
  stampLine(rows, at, line.id, now, BATCH_HANDLER_STAGE, 'batched', 2 * index + 1);
  return { subnet, line, cost };
}

/**
 * True at most once per `gapMs` for each partition, and then remembers the time. In-memory only: it
 * decides how often work is done, never what a call outputs, so a restart that forgets it is harmless.
 */
function perPartitionThrottle(gapMs: number): (partition: number, now: number) => boolean {
  const last = new Map<number, number>();
  return (partition, now) => {
    if (now - (last.get(partition) ?? -Infinity) < gapMs) return false;
    last.set(partition, now);
    return true;
  };
}

/**
 * The valid line as batches carry it, serialised once (see ContextLine): its fields in their order,
 * `ts` rewritten, `logline_id` and `subnet_id` added.
 */
function lineText(
  fields: Readonly<Record<string, unknown>>,
  tsMicros: number,
  logline_id: string,
  subnet_id: string,
): ContextLine {
  const line = copyFields(fields);
  line.ts = isoFromMicros(tsMicros);
  line.logline_id = logline_id;
  line.subnet_id = subnet_id;
  return { json: JSON.stringify(line), id: logline_id, micros: tsMicros };
}

/** The fields a `loglines` row has columns for; the others go to its `additional_fields`. */
const ROW_COLUMNS: ReadonlySet<string> = new Set(['ts', 'src_ip', 'status_code', 'record_type']);

/**
 * A copy of a line's own fields but `except`, built key by key: V8 (Node 20) runs object spreads
 * (`{ ...fields, ts }`) and rest patterns in its runtime, 1-3 µs a line against a fraction of that.
 */
function copyFields(
  fields: Readonly<Record<string, unknown>>,
  except?: ReadonlySet<string>,
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    if (except?.has(key)) continue;
    // An input line's own "__proto__" key is data: assigned, it would set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { ...DATA_PROPERTY, value: fields[key] });
    else copy[key] = fields[key];
  }
  return copy;
}

const DATA_PROPERTY = { enumerable: true, writable: true, configurable: true } as const;

/**
 * A line's `logline_timestamps` row. A module function, not a closure made per line: the TypeScript
 * loader names every closure it creates (a property definition each time), about 3 % of the
 * collector's own time.
 */
function stampLine(
  rows: MonitoringRowBatch,
  record: RecordPosition,
  id: string,
  now: number,
  stage: string,
  status: string,
  index: number,
): void {
  rows.add('logline_timestamps', record, index, {
    logline_id: id,
    stage,
    status,
    timestamp: now,
    is_active: true,
  });
}
