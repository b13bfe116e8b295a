import type { HamstringConfig, InspectorConfig } from '../../config/index.ts';
import type { TableName } from '../../monitoring/tables.ts';
import {
  systemClock,
  type Clock,
  type ProcessResult,
  type Stage,
  type StageContext,
  type StageOutput,
  type TimerContext,
} from '../../runtime/index.ts';
import { processBatches, type BatchStep } from '../batch-stage.ts';
import { collectorSettings } from '../collector/collector-settings.ts';
import { stableId } from '../ids.ts';
import { CallRows } from '../monitoring-rows.ts';
import { encodeBatch, type Batch, type LogLine } from '../messages.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { addLines, closeOpenBin, type BinVerdicts, type SubnetModel } from './bin-stream.ts';
import { splitBySource } from './inspection.ts';
import { inspectorModel } from './models.ts';
import type { StreamModel } from './univariate-models.ts';

export const INSPECTOR_STAGE = 'data_inspection.inspector';
/** Model state per subnet_id (StreamADInspector only). */
export const MODEL_STORE = 'models';

const TABLES: readonly TableName[] = [
  'batch_timestamps',
  'logline_timestamps',
  'batch_tree',
  'suspicious_batches_to_batch',
  'suspicious_batch_timestamps',
];

export interface InspectorStageOptions {
  readonly config: HamstringConfig;
  /** `pipeline.data_inspection[].name` of the inspector this stage runs. */
  readonly inspectorName: string;
  readonly clock?: Clock;
  readonly monitoringTopicPrefix?: string;
}

/**
 * The inspector of one `data_inspection` entry. `StreamADInspector` bins each subnet's lines on
 * event time with state that carries across batches (`bin-stream.ts`), the model's state per subnet
 * in the `models` store (partitioned like the input, which is keyed by subnet_id): a line is decided
 * when its bin closes, so the verdict does not depend on how lines fell into batches. The decided
 * lines of the hosts found suspicious in their event-time span (`SUSPICION_SPAN_MICROS`) or a span
 * beside it are split per
 * src_ip and each part sent, keyed by src_ip, to every detector of this inspector; the other decided
 * lines leave the pipeline (`finished`). The newest bin and span of a subnet wait for the subnet's next
 * batch, or, once the subnet has been quiet for twice its collector's `batch_timeout`, for the timer. `NoInspector` sends every batch on whole.
 */
export function createInspectorStage(options: InspectorStageOptions): Stage {
  const { config, inspectorName } = options;
  const inspector = config.pipeline.data_inspection.find((entry) => entry.name === inspectorName);
  if (!inspector) throw new Error(`no inspector named "${inspectorName}" in pipeline.data_inspection`);
  const clock = options.clock ?? systemClock;
  const prefix = options.monitoringTopicPrefix;
  const streaming = inspector.inspector_class_name === 'StreamADInspector';
  const model = streaming ? inspectorModel(inspector) : undefined;
  const targets = config.pipeline.data_analysis
    .filter((detector) => detector.inspector_name === inspectorName)
    .map((detector) => pipelineTopic(config, 'inspector_to_detector', detector.name));
  const quietMs = quietAfterMs(config, inspector.prefilter_name);
  const self: Inspector = { name: inspectorName, targets, settings: inspector, model };

  const identity = {
    stage: INSPECTOR_STAGE,
    instanceName: inspectorName,
    now: () => clock.now(),
    monitoringTopicPrefix: prefix,
  };
  const stage: Stage = {
    name: INSPECTOR_STAGE,
    shortName: 'inspector',
    inputTopics: [pipelineTopic(config, 'prefilter_to_inspector', inspectorName)],
    outputTopics: [...targets, ...monitoringTopics(TABLES, prefix)],
    process: (records, ctx) => processBatches(records, identity, (step) => inspectBatch(self, step, ctx)),
  };
  if (!model) return stage;
  return {
    ...stage,
    stores: { [MODEL_STORE]: {} },
    timer: { intervalMs: Math.min(1000, Math.max(100, Math.round(quietMs / 4))) },
    // Twice the collector's batch timeout: an active subnet's next batch comes about one timeout after
    // the one before, so only a subnet really gone quiet has its bin closed by the clock (closing it
    // early split the bin in two rows when the next batch brought lines of it, a race of wall time).
    onTimer: (ctx) => closeQuietBins({ ...self, model }, ctx, 2 * quietMs, prefix),
  };
}

/** What every call of one inspector uses, resolved once from the config. */
interface Inspector {
  readonly name: string;
  /** `<inspector_to_detector>-<detector>` of every detector of this inspector. */
  readonly targets: readonly string[];
  readonly settings: InspectorConfig;
  /** The stream model of a `StreamADInspector`; none for `NoInspector`. */
  readonly model: StreamModel<unknown[]> | undefined;
}

/**
 * One input batch: sent on whole without a model; with one, its own lines (not the context lines)
 * go into their subnet's bins, and the lines of the bins that closed are decided.
 */
function inspectBatch(self: Inspector, step: BatchStep, ctx: StageContext): void {
  const { record, batch, stamp, emit } = step;
  const subnet = batch.data[0]?.subnet_id;
  if (!self.model || subnet === undefined) {
    emit('batch_timestamps', {
      ...stamp,
      batch_id: batch.batch_id,
      status: 'finished',
      is_active: true,
      message_count: batch.data.length,
    });
    // The context marks go on with the lines: without them the detector took the previous batch's
    // lines for new ones, scored them again and wrote their rows twice.
    send(self, batch, batch.data, step, record, batch.context_logline_ids);
    return;
  }
  const context = new Set(batch.context_logline_ids ?? []);
  const own = batch.data.filter((line) => !context.has(line.logline_id));
  const store = ctx.state(record.partition).store<SubnetModel>(MODEL_STORE);
  const verdicts = addLines(own, store.get(subnet), self.model, self.settings, step.now);
  store.put(subnet, verdicts.next);
  emit('batch_timestamps', {
    ...stamp,
    batch_id: batch.batch_id,
    status: 'finished',
    is_active: verdicts.suspiciousHosts.size > 0,
    message_count: batch.data.length,
  });
  decide(self, batch, verdicts, step, record);
}

/** A timer call: the newest bin of every subnet quiet for `quietMs` closes and its lines are decided. */
function closeQuietBins(
  self: Inspector & { readonly model: StreamModel<unknown[]> },
  ctx: TimerContext,
  quietMs: number,
  prefix: string | undefined,
): ProcessResult {
  const outputs: StageOutput[] = [];
  const rows = new CallRows(prefix);
  // No input record: the rows' identity is the timer call's (stage, inspector, partition, time).
  const emit = rows.about({
    topic: `__timer.${INSPECTOR_STAGE}.${self.name}`,
    partition: ctx.partition,
    offset: ctx.now,
  });
  const stamp = { stage: INSPECTOR_STAGE, instance_name: self.name, timestamp: ctx.now };
  const store = ctx.state.store<SubnetModel>(MODEL_STORE);
  for (const [subnet, stored] of [...store.range()]) {
    if (!stored.open || ctx.now - stored.open.since < quietMs) continue;
    const verdicts = closeOpenBin(stored, self.model, self.settings);
    store.put(subnet, verdicts.next);
    const id = stableId('inspector_bin', self.name, subnet, String(stored.open.bin));
    const parent: Batch = {
      batch_tree_row_id: stableId('batch_tree', id, INSPECTOR_STAGE),
      batch_id: id,
      begin_timestamp: '',
      end_timestamp: '',
      data: [],
    };
    if (verdicts.decided.length > 0)
      emit('batch_tree', {
        ...stamp,
        batch_row_id: parent.batch_tree_row_id,
        status: 'finished',
        parent_batch_row_id: null,
        batch_id: id,
      });
    decide(self, parent, verdicts, { emit, stamp, outputs, now: ctx.now });
  }
  rows.flush(outputs);
  return { outputs };
}

/**
 * Sends `lines` (lines of one input batch, or of a closed bin) split per src_ip; `context`: which of
 * them the collector carried over from the previous batch (a whole batch sent on by NoInspector).
 */
function send(
  self: Inspector,
  parent: Batch,
  lines: readonly LogLine[],
  step: Pick<BatchStep, 'emit' | 'stamp' | 'outputs'>,
  source?: StageOutput['source'],
  context?: readonly string[],
): void {
  if (lines.length === 0) return;
  const { emit, stamp, outputs } = step;
  const batch: Batch = {
    batch_tree_row_id: parent.batch_tree_row_id,
    batch_id: parent.batch_id,
    begin_timestamp: lines[0]!.ts,
    end_timestamp: lines[lines.length - 1]!.ts,
    data: [...lines],
    ...(context && context.length > 0 ? { context_logline_ids: context } : {}),
  };
  for (const part of splitBySource(batch, self.name, INSPECTOR_STAGE)) {
    const id = part.batch.batch_id;
    emit('suspicious_batches_to_batch', { suspicious_batch_id: id, batch_id: parent.batch_id });
    emit('suspicious_batch_timestamps', {
      ...stamp,
      suspicious_batch_id: id,
      client_ip: part.srcIp,
      status: 'in_process',
      is_active: true,
      message_count: part.batch.data.length,
    });
    emit('batch_tree', {
      ...stamp,
      batch_row_id: part.batch.batch_tree_row_id,
      status: 'in_process',
      parent_batch_row_id: parent.batch_tree_row_id,
      batch_id: id,
    });
    const value = encodeBatch(part.batch);
    for (const topic of self.targets)
      outputs.push(source ? { topic, key: part.srcIp, value, source } : { topic, key: part.srcIp, value });
  }
}

/** Records the decided lines: those of hosts suspicious in their span go on, the others finish here. */
function decide(
  self: Inspector,
  parent: Batch,
  verdicts: BinVerdicts,
  step: Pick<BatchStep, 'emit' | 'stamp' | 'outputs' | 'now'>,
  source?: StageOutput['source'],
): void {
  const suspicious = verdicts.suspicious;
  const goOn = new Set(suspicious);
  for (const line of verdicts.decided) {
    if (goOn.has(line)) continue;
    step.emit('logline_timestamps', {
      logline_id: line.logline_id,
      stage: INSPECTOR_STAGE,
      status: 'finished',
      timestamp: step.now,
      is_active: false,
    });
  }
  send(self, parent, suspicious, step, source);
}

/** How long a subnet's newest bin waits for more lines: its collector's `batch_timeout`. */
function quietAfterMs(config: HamstringConfig, prefilterName: string): number {
  const prefilter = config.pipeline.log_filtering.find((entry) => entry.name === prefilterName);
  const collector = config.pipeline.log_collection.collectors.find(
    (c) => c.name === prefilter?.collector_name,
  );
  if (collector) return collectorSettings(config, collector).buffer.timeoutMs;
  return Math.round(config.pipeline.log_collection.default_batch_handler_config.batch_timeout * 1000);
}
