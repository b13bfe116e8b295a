export { resolveBatchSettings } from './batch-settings.ts';
export type { BatchSettings, BatchSettingsRequest } from './batch-settings.ts';
export { resolveCommitInterval } from './commit-interval.ts';
export type { CommitIntervalSettings } from './commit-interval.ts';
export { BATCH_ENV, CONFIG_ENV_OVERRIDES } from './env-overrides.ts';
export { ConfigError } from './errors.ts';
export type { ConfigIssue } from './errors.ts';
export {
  CONFIG_PATH_ENV,
  DEFAULT_CONFIG_PATH,
  bootstrapServers,
  loadConfig,
  validateConfig,
} from './load.ts';
export type { LoadConfigOptions } from './load.ts';
export {
  DOMAIN_NAME_PATTERN,
  LOG_FIELD_TYPES,
  REQUIRED_LOG_FIELDS,
  RESERVED_LOG_FIELD_NAMES,
  STRPTIME_DIRECTIVES,
} from './log-line-format.ts';
export {
  ENSEMBLE_ARGS,
  INSPECTOR_CLASSES,
  MULTIVARIATE_MODEL_ARGS,
  UNIVARIATE_MODEL_ARGS,
} from './inspector-models.ts';
export type { EnsembleName, MultivariateModelName, UnivariateModelName } from './inspector-models.ts';
export type { LogField, LogFieldType } from './log-line-format.ts';
export type { InputFormat, ZeekSensorConfig } from './source-schema.ts';
export { GENERIC_ALERTER } from './pipeline-schema.ts';
export {
  DEFAULT_WARNING_LATENESS_SECONDS,
  DEFAULT_WARNING_WINDOW_SECONDS,
  warningWindowSettings,
  type WarningWindowSettings,
} from './warning-window.ts';
export { hamstringConfigSchema } from './schema.ts';
export type {
  AlertingConfig,
  BatchHandlerConfig,
  CollectorConfig,
  DetectorConfig,
  EnvironmentConfig,
  HamstringConfig,
  HamstringConfigInput,
  InspectorConfig,
  MonitoringConfig,
  PrefilterConfig,
  RuntimeConfig,
  DashboardConfig,
} from './schema.ts';
export { PIPELINE_STAGES, fullStageName, unknownStageKeys } from './stage-names.ts';
export type { StageFullName, StageShortName, UnknownStageKey } from './stage-names.ts';
