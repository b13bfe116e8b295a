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
import { stableId } from '../ids.ts';
import { decodeBatch, encodeBatch, type Batch } from '../messages.ts';
import { CallRows } from '../monitoring-rows.ts';
import { monitoringTopics, pipelineTopic } from '../topics.ts';
import { relevanceCheck } from './relevance.ts';

export const PREFILTER_STAGE = 'log_filtering.prefilter';

const TABLES: readonly TableName[] = ['batch_timestamps', 'logline_timestamps', 'batch_tree'];

export interface PrefilterStageOptions {
  readonly config: HamstringConfig;
  /** `pipeline.log_filtering[].name` of the prefilter this stage runs. */
  readonly prefilterName: string;
  readonly clock?: Clock;
  readonly monitoringTopicPrefix?: string;
}

/**
 * The prefilter of one `log_filtering` entry: drops the lines of each batch that its relevance
 * method finds irrelevant (each recorded as `filtered_out`) and sends what is left, keyed by
 * subnet_id, to every inspector of this prefilter. A batch left with no line of its own (context
 * lines only, or none) is not sent. A record that is not a Batch is dead-lettered.
 */
export function createPrefilterStage(options: PrefilterStageOptions): Stage {
  const { config, prefilterName } = options;
  const prefilter = config.pipeline.log_filtering.find((entry) => entry.name === prefilterName);
  if (!prefilter) throw new Error(`no prefilter named "${prefilterName}" in pipeline.log_filtering`);
  const collector = config.pipeline.log_collection.collectors.find(
    (entry) => entry.name === prefilter.collector_name,
  );
  const relevant = relevanceCheck(prefilter.relevance_method, collector?.required_log_information ?? []);
  const clock = options.clock ?? systemClock;
  const prefix = options.monitoringTopicPrefix;
  const targets = config.pipeline.data_inspection
    .filter((inspector) => inspector.prefilter_name === prefilterName)
    .map((inspector) => pipelineTopic(config, 'prefilter_to_inspector', inspector.name));

  return {
    name: PREFILTER_STAGE,
    shortName: 'prefilter',
    inputTopics: [pipelineTopic(config, 'batch_sender_to_prefilter', prefilterName)],
    outputTopics: [...targets, ...monitoringTopics(TABLES, prefix)],
    process(records): ProcessResult {
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
        const stamp = { stage: PREFILTER_STAGE, instance_name: prefilterName, timestamp: now };
        emit('batch_timestamps', {
          ...stamp,
          batch_id: batch.batch_id,
          status: 'in_process',
          is_active: true,
          message_count: batch.data.length,
        });
        const context = new Set(batch.context_logline_ids ?? []);
        const kept = batch.data.filter(relevant);
        const keptIds = new Set(kept.map((line) => line.logline_id));
        for (const line of batch.data) {
          if (context.has(line.logline_id) || keptIds.has(line.logline_id)) continue;
          emit('logline_timestamps', {
            logline_id: line.logline_id,
            stage: PREFILTER_STAGE,
            status: 'filtered_out',
            timestamp: now,
            is_active: false,
          });
        }
        const sent = kept.some((line) => !context.has(line.logline_id));
        const status = sent ? 'finished' : 'filtered_out';
        const rowId = stableId('batch_tree', batch.batch_id, PREFILTER_STAGE, prefilterName);
        emit('batch_timestamps', {
          ...stamp,
          batch_id: batch.batch_id,
          status,
          is_active: sent,
          message_count: kept.length,
        });
        emit('batch_tree', {
          ...stamp,
          batch_row_id: rowId,
          status,
          parent_batch_row_id: batch.batch_tree_row_id,
          batch_id: batch.batch_id,
        });
        if (!sent) continue;
        const keptContext = kept
          .filter((line) => context.has(line.logline_id))
          .map((line) => line.logline_id);
        const filtered: Batch = {
          batch_tree_row_id: rowId,
          batch_id: batch.batch_id,
          begin_timestamp: kept[0]!.ts,
          end_timestamp: kept[kept.length - 1]!.ts,
          data: kept,
          ...(keptContext.length > 0 ? { context_logline_ids: keptContext } : {}),
        };
        const value = encodeBatch(filtered);
        const key = record.key ?? kept[0]!.subnet_id;
        for (const topic of targets) outputs.push({ topic, key, value, source: record });
      }
      return failures.length > 0 ? { outputs, failures } : { outputs };
    },
  };
}
