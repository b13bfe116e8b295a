/**
 * The transactional pipeline stages: the short component name and the full internal name
 * (also the logger name). Both spellings are accepted as keys of
 * `environment.kafka_transaction_batch.stages`; the full one wins.
 */
export const PIPELINE_STAGES = [
  { short: 'logserver', full: 'log_storage.logserver' },
  { short: 'collector', full: 'log_collection.collector' },
  { short: 'prefilter', full: 'log_filtering.prefilter' },
  { short: 'inspector', full: 'data_inspection.inspector' },
  { short: 'detector', full: 'data_analysis.detector' },
  { short: 'alerter', full: 'data_alerting.alerter' },
] as const;

export type StageShortName = (typeof PIPELINE_STAGES)[number]['short'];
export type StageFullName = (typeof PIPELINE_STAGES)[number]['full'];

/** Every accepted key of `kafka_transaction_batch.stages`. */
export const STAGE_KEYS = PIPELINE_STAGES.flatMap((stage) => [stage.short, stage.full]) as [
  StageShortName | StageFullName,
  ...(StageShortName | StageFullName)[],
];

/** The full name of a known short name (`detector` -> `data_analysis.detector`). */
export function fullStageName(short: string): string | undefined {
  return PIPELINE_STAGES.find((stage) => stage.short === short)?.full;
}
