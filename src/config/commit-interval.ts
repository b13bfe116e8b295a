import type { HamstringConfig } from './schema.ts';
import { fullStageName } from './stage-names.ts';

/** A stage's commit interval (`kafka_transaction_batch.stages.<stage>.commit_*`), with its source. */
export interface CommitIntervalSettings {
  maxMs?: number;
  maxRecords?: number;
  /** `stage:<name>`: the entry it came from. */
  source: string;
}

/**
 * The commit interval of one stage: the `stages` entry under the full name, else the short name,
 * the same precedence as the batch settings. Undefined when neither entry sets one (each batch is
 * then its own transaction).
 */
export function resolveCommitInterval(
  config: HamstringConfig,
  stage: { short: string; full?: string },
): CommitIntervalSettings | undefined {
  const stages = config.environment.kafka_transaction_batch.stages as Readonly<
    Record<string, { commit_interval_ms?: number; commit_max_records?: number } | undefined>
  >;
  for (const name of [stage.full ?? fullStageName(stage.short), stage.short]) {
    const entry = name === undefined ? undefined : stages[name];
    if (entry?.commit_interval_ms === undefined && entry?.commit_max_records === undefined) continue;
    return {
      ...(entry.commit_interval_ms === undefined ? {} : { maxMs: entry.commit_interval_ms }),
      ...(entry.commit_max_records === undefined ? {} : { maxRecords: entry.commit_max_records }),
      source: `stage:${name}`,
    };
  }
  return undefined;
}
