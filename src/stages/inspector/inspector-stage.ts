import type { HamstringConfig } from '../../config/index.ts';
import type { TableName } from '../../monitoring/tables.ts';
import {
  systemClock,
  type Clock,
  type ProcessResult,
  type RecordFailure,
  type Stage,
  type StageOutput,
} from '../../runtime/index.ts';
import { decodeBatch, encodeBatch, type Batch } from '../messages.ts';
import { CallRows } from '../monitoring-rows.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { inspect, splitBySource, type SubnetModel } from './inspection.ts';
import { inspectorModel } from './models.ts';

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
 * The inspector of one `data_inspection` entry. `StreamADInspector` scores each subnet's batches
 * with the configured model, whose state per subnet lives in the `models` store (partitioned like
 * the input, which is keyed by subnet_id); `NoInspector` finds every batch suspicious. A suspicious
 * batch is split per src_ip and each part sent, keyed by src_ip, to every detector of this
 * inspector; the lines of a batch found normal leave the pipeline (`finished`).
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

  const stage: Stage = {
    name: INSPECTOR_STAGE,
    shortName: 'inspector',
    inputTopics: [pipelineTopic(config, 'prefilter_to_inspector', inspectorName)],
    outputTopics: [...targets, ...monitoringTopics(TABLES, prefix)],
    ...(streaming ? { stores: { [MODEL_STORE]: {} } } : {}),
    process(records, ctx): ProcessResult {
      const outputs: StageOutput[] = [];
      const failures: RecordFailure[] = [];
      const rows = new CallRows(outputs, prefix);
      for (const record of records) {
        let batch: Batch;
        try {
          batch = decodeBatch(record.value);
        } catch (error) {
          failures.push({ record, error });
          continue;
        }
        const now = clock.now();
        const emit = rows.about(record);
        const stamp = { stage: INSPECTOR_STAGE, instance_name: inspectorName, timestamp: now };
        emit('batch_timestamps', {
          ...stamp,
          batch_id: batch.batch_id,
          status: 'in_process',
          is_active: true,
          message_count: batch.data.length,
        });
        let suspicious = true;
        const subnet = batch.data[0]?.subnet_id;
        if (model && subnet !== undefined) {
          const store = ctx.state(record.partition).store<SubnetModel>(MODEL_STORE);
          const result = inspect(batch, store.get(subnet), model, inspector);
          if (result.next) store.put(subnet, result.next);
          suspicious = result.suspicious;
        }
        const parentRow = batch.batch_tree_row_id;
        emit('batch_timestamps', {
          ...stamp,
          batch_id: batch.batch_id,
          status: 'finished',
          is_active: suspicious,
          message_count: batch.data.length,
        });
        if (!suspicious) {
          const context = new Set(batch.context_logline_ids ?? []);
          for (const line of batch.data) {
            if (context.has(line.logline_id)) continue;
            emit('logline_timestamps', {
              logline_id: line.logline_id,
              stage: INSPECTOR_STAGE,
              status: 'finished',
              timestamp: now,
              is_active: false,
            });
          }
          continue;
        }
        for (const part of splitBySource(batch, inspectorName, INSPECTOR_STAGE)) {
          const id = part.batch.batch_id;
          emit('suspicious_batches_to_batch', { suspicious_batch_id: id, batch_id: batch.batch_id });
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
            parent_batch_row_id: parentRow,
            batch_id: id,
          });
          const value = encodeBatch(part.batch);
          for (const topic of targets) outputs.push({ topic, key: part.srcIp, value, source: record });
        }
      }
      return failures.length > 0 ? { outputs, failures } : { outputs };
    },
  };
  return stage;
}
