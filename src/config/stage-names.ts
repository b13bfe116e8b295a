import type { HamstringConfig } from './schema.ts';
import { closest } from './zod-issues.ts';

/**
 * The built-in pipeline stages: the short component name and the full internal name (also the
 * logger name). Per-stage sections (`environment.kafka_transaction_batch.stages`,
 * `environment.record_errors.stages`) accept both spellings, the full one winning, and any other
 * stage's names too.
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

/** Both names of every built-in stage. */
export const STAGE_KEYS = PIPELINE_STAGES.flatMap((stage) => [stage.short, stage.full]) as [
  StageShortName | StageFullName,
  ...(StageShortName | StageFullName)[],
];

/** The full name of a known short name (`detector` -> `data_analysis.detector`). */
export function fullStageName(short: string): string | undefined {
  return PIPELINE_STAGES.find((stage) => stage.short === short)?.full;
}

/** A per-stage config key that names no stage a process knows of. */
export interface UnknownStageKey {
  /** Key path, e.g. `environment.record_errors.stages.detecter`. */
  path: string;
  /** The known name it most likely misspells. */
  suggestion?: string;
}

/**
 * Keys of the per-stage sections naming neither a built-in stage nor one of `stages`. The schema
 * cannot tell a user's own stage from a typo, so the process that knows its stages reports them.
 */
export function unknownStageKeys(
  config: HamstringConfig,
  stages: readonly { name: string; shortName?: string }[],
): UnknownStageKey[] {
  const known = [...STAGE_KEYS, ...stages.flatMap((s) => (s.shortName ? [s.name, s.shortName] : [s.name]))];
  const sections: [string, Record<string, unknown>][] = [
    ['environment.kafka_transaction_batch.stages', config.environment.kafka_transaction_batch.stages],
    ['environment.record_errors.stages', config.environment.record_errors.stages],
  ];
  return sections.flatMap(([section, entries]) =>
    Object.keys(entries)
      .filter((key) => !known.includes(key))
      .map((key) => {
        const suggestion = closest(key, known);
        return { path: `${section}.${key}`, ...(suggestion !== undefined ? { suggestion } : {}) };
      }),
  );
}
