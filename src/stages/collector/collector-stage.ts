import type { HamstringConfig } from '../../config/index.ts';
import { monitoringEvent } from '../../monitoring/events.ts';
import type { TableName } from '../../monitoring/tables.ts';
import {
  systemClock,
  type Clock,
  type ProcessResult,
  type RecordPosition,
  type Stage,
  type StageOutput,
  type StageRecord,
  type TimerContext,
} from '../../runtime/index.ts';
import { stableId } from '../ids.ts';
import { encodeBatch, isoFromMicros, type LogLine } from '../messages.ts';
import { subnetId } from '../subnet.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { BATCH_HANDLER_STAGE, BATCH_STORE, BatchBuffer, type SentBatch } from './batch-buffer.ts';
import { collectorSettings } from './collector-settings.ts';
import { compileLineValidator, DEFAULT_MAX_JSON_DEPTH, type LineVerdict } from './line-validation.ts';

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

/**
 * The collector of one `log_collection.collectors` entry: validates each line of
 * `<logserver_to_collector>-<name>`, records failed ones, batches valid ones per subnet in the
 * `batches` store and sends each batch to `<batch_sender_to_prefilter>-<prefilter>` of every
 * prefilter of this collector, keyed by subnet_id: when it is full at once, otherwise from the timer
 * once it has waited `batch_timeout`.
 */
export function createCollectorStage(options: CollectorStageOptions): Stage {
  const { config, collectorName } = options;
  const collector = config.pipeline.log_collection.collectors.find((entry) => entry.name === collectorName);
  if (!collector)
    throw new Error(`no collector named "${collectorName}" in pipeline.log_collection.collectors`);
  const settings = collectorSettings(config, collector);
  const clock = options.clock ?? systemClock;
  const prefix = options.monitoringTopicPrefix;
  const targets = config.pipeline.log_filtering
    .filter((prefilter) => prefilter.collector_name === collectorName)
    .map((prefilter) => pipelineTopic(config, 'batch_sender_to_prefilter', prefilter.name));
  const validate = compileLineValidator(collector.required_log_information, {
    maxLineBytes: collector.max_line_bytes,
    maxDepth: DEFAULT_MAX_JSON_DEPTH,
  });
  const row = rowFactory(prefix);

  function batchOutputs(sent: SentBatch, now: number, source?: RecordPosition): StageOutput[] {
    const { batch } = sent;
    const value = encodeBatch(batch);
    const subnet = batch.data[0]?.subnet_id ?? '';
    const outputs: StageOutput[] = targets.map((topic) => ({
      topic,
      key: subnet,
      value,
      ...(source ? { source } : {}),
    }));
    const common = { stage: BATCH_HANDLER_STAGE, instance_name: collectorName, timestamp: now };
    outputs.push(
      row('batch_timestamps', sent.lastSource, 0, source, {
        ...common,
        batch_id: batch.batch_id,
        status: 'completed',
        is_active: true,
        message_count: batch.data.length,
      }),
      row('batch_tree', sent.lastSource, 0, source, {
        ...common,
        batch_row_id: batch.batch_tree_row_id,
        status: 'completed',
        parent_batch_row_id: null,
        batch_id: batch.batch_id,
      }),
      ...sent.lines.map((stored) =>
        row('logline_to_batches', stored.source, 0, source, {
          logline_id: stored.line.logline_id,
          batch_id: batch.batch_id,
        }),
      ),
    );
    return outputs;
  }

  function lineOutputs(
    record: StageRecord,
    verdict: LineVerdict,
    now: number,
  ): { outputs: StageOutput[]; line?: LogLine } {
    const subnet = verdict.ok ? subnetId(verdict.srcIp, settings.subnet) : undefined;
    const problem = !verdict.ok
      ? verdict.reason
      : verdict.tsMicros < 0
        ? 'field "ts": before 1970'
        : undefined;
    if (problem !== undefined || !verdict.ok || subnet === undefined) {
      const text = (record.value ?? Buffer.alloc(0)).subarray(0, MAX_FAILED_TEXT).toString('utf8');
      const failed = row('failed_loglines', record, 0, record, {
        message_text: text,
        timestamp_in: now,
        timestamp_failed: now,
        reason_for_failure: problem ?? 'field "src_ip": no subnet',
      });
      return { outputs: [failed] };
    }
    const line = toLogLine(
      verdict.fields,
      verdict.tsMicros,
      stableId('logline', record.topic, record.partition, record.offset),
      subnet,
    );
    const { ts: _ts, src_ip: _ip, status_code, record_type, ...rest } = verdict.fields;
    const stamp = (stage: string, status: string, index: number) =>
      row('logline_timestamps', record, index, record, {
        logline_id: line.logline_id,
        stage,
        status,
        timestamp: now,
        is_active: true,
      });
    const outputs = [
      row('loglines', record, 0, record, {
        logline_id: line.logline_id,
        subnet_id: subnet,
        timestamp: Math.floor(verdict.tsMicros / 1000),
        status: typeof status_code === 'string' ? status_code : '',
        client_ip: verdict.srcIp,
        record_type: typeof record_type === 'string' ? record_type : '',
        additional_fields: JSON.stringify(rest),
      }),
      stamp(COLLECTOR_STAGE, 'in_process', 0),
      stamp(BATCH_HANDLER_STAGE, 'batched', 1),
    ];
    return { outputs, line };
  }

  return {
    name: COLLECTOR_STAGE,
    shortName: 'collector',
    inputTopics: [pipelineTopic(config, 'logserver_to_collector', collectorName)],
    outputTopics: [...targets, ...monitoringTopics(TABLES, prefix)],
    stores: { [BATCH_STORE]: {} },
    timer: { intervalMs: settings.timerIntervalMs },
    process(records, ctx): ProcessResult {
      const outputs: StageOutput[] = [];
      for (const record of records) {
        const now = clock.now();
        const result = lineOutputs(record, validate(record.value), now);
        outputs.push(...result.outputs);
        if (!result.line) continue;
        const buffer = new BatchBuffer(ctx.state(record.partition).store(BATCH_STORE), settings.buffer);
        const sent = buffer.add(result.line, record, now);
        if (sent) outputs.push(...batchOutputs(sent, now, record));
      }
      return { outputs };
    },
    onTimer(ctx: TimerContext): ProcessResult {
      const buffer = new BatchBuffer(ctx.state.store(BATCH_STORE), settings.buffer);
      const outputs = buffer.due(ctx.now).flatMap((sent) => batchOutputs(sent, ctx.now));
      // No input record: the row's identity is the timer call's (stage, collector, partition, time).
      const source = {
        topic: `__timer.${COLLECTOR_STAGE}.${collectorName}`,
        partition: ctx.partition,
        offset: ctx.now,
      };
      outputs.push(
        row('fill_levels', source, 0, undefined, {
          timestamp: ctx.now,
          stage: BATCH_HANDLER_STAGE,
          entry_type: 'total_loglines',
          entry_count: buffer.bufferedLines(),
        }),
      );
      return { outputs };
    },
  };
}

function toLogLine(
  fields: Readonly<Record<string, unknown>>,
  tsMicros: number,
  logline_id: string,
  subnet_id: string,
): LogLine {
  return { ...fields, ts: isoFromMicros(tsMicros), src_ip: fields.src_ip as string, logline_id, subnet_id };
}

/** Monitoring rows with a fixed index per (table, status): rows of one source never collide. */
function rowFactory(prefix: string | undefined) {
  return <T extends TableName>(
    table: T,
    identity: RecordPosition,
    index: number,
    source: RecordPosition | undefined,
    values: Parameters<typeof monitoringEvent<T>>[3],
  ): StageOutput => {
    const output = monitoringEvent(table, identity, index, values, prefix);
    return source ? { ...output, source } : output;
  };
}
