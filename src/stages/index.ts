/**
 * The pipeline stages the application layer builds from a loaded config: one Stage per configured
 * component (`createCollectorStage` per `log_collection.collectors` entry, and so on), and the
 * message shapes they exchange.
 */
export { createLogserverStage, LOGSERVER_STAGE, FILE_POSITION_STORE } from './logserver/logserver-stage.ts';
export type { LogserverStageOptions } from './logserver/logserver-stage.ts';
export { createCollectorStage, COLLECTOR_STAGE } from './collector/collector-stage.ts';
export type { CollectorStageOptions } from './collector/collector-stage.ts';
export { BATCH_STORE, BATCH_HANDLER_STAGE } from './collector/batch-buffer.ts';
export { createPrefilterStage, PREFILTER_STAGE } from './prefilter/prefilter-stage.ts';
export type { PrefilterStageOptions } from './prefilter/prefilter-stage.ts';
export { createInspectorStage, INSPECTOR_STAGE, MODEL_STORE } from './inspector/inspector-stage.ts';
export type { InspectorStageOptions } from './inspector/inspector-stage.ts';
export {
  decodeAlert,
  decodeBatch,
  encodeAlert,
  encodeBatch,
  isoFromMicros,
  timestampMicros,
  compareLines,
} from './messages.ts';
export type { Alert, AlertWarning, Batch, LogLine } from './messages.ts';
export { loglineId, stableId } from './ids.ts';
export { subnetId } from './subnet.ts';
export { componentGroupId, pipelineTopic } from './topics.ts';
export {
  componentGroup,
  componentStage,
  componentsOf,
  pipelineComponents,
  selectComponent,
  type ComponentKind,
  type PipelineComponent,
} from './pipeline-components.ts';
