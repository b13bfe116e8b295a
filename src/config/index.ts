export { resolveBatchSettings } from './batch-settings.ts';
export type { BatchSettings, BatchSettingsRequest } from './batch-settings.ts';
export { resolveCommitInterval } from './commit-interval.ts';
export type { CommitIntervalSettings } from './commit-interval.ts';
export { BATCH_ENV, CONFIG_ENV_OVERRIDES } from './env-overrides.ts';
export { ConfigError } from './errors.ts';
export {
  KAFKA_SASL_MECHANISMS,
  KAFKA_SECURITY_ENV,
  KAFKA_SECURITY_PROTOCOLS,
  PLAINTEXT_SECURITY,
  kafkaSecurityFromEnv,
  resolveKafkaSecurity,
} from './kafka-security.ts';
export type { KafkaSaslMechanism, KafkaSecurity, KafkaSecurityProtocol } from './kafka-security.ts';
export type { ConfigIssue } from './errors.ts';
export {
  CONFIG_PATH_ENV,
  DEFAULT_CONFIG_PATH,
  bootstrapServers,
  configWarnings,
  loadConfig,
  validateConfig,
} from './load.ts';
export { V2_DOMAIN_NAME_PATTERN } from './compat.ts';
export type { ConfigWarning } from './compat.ts';
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
export { GENERIC_ALERTER } from './alerting-schema.ts';
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
export { hostPort, sensorSchema } from './sensors-schema.ts';
export { listenerTlsSchema, resolveListenerTls } from './listener-tls.ts';
export type { ListenerTls, ListenerTlsConfig } from './listener-tls.ts';
export type { DnstapSensorConfig, PcapSensorConfig, SensorConfig } from './sensors-schema.ts';
export { SYSLOG_FACILITIES, SYSLOG_SEVERITIES } from './syslog-schema.ts';
export type { SyslogConfig } from './syslog-schema.ts';
