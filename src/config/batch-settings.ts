import { BATCH_ENV, readBatchEnv } from './env-overrides.ts';
import { ConfigError } from './errors.ts';
import type { HamstringConfig } from './schema.ts';
import { fullStageName } from './stage-names.ts';

/** Which consumer the batch is for. */
export interface BatchSettingsRequest {
  config: HamstringConfig;
  /** Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * The consuming stage, any name; `full` defaults to the known full name of `short` (`detector` ->
   * `data_analysis.detector`).
   */
  stage?: { short?: string; full?: string };
  /** Every topic the consumer subscribes to, by complete name. */
  topics: readonly string[];
  /** Values the caller passes to consume_batch itself; they win over everything. */
  explicit?: { maxMessages?: number; timeoutMs?: number };
}

/** The effective transaction batch, with where each value came from (for the start-up log). */
export interface BatchSettings {
  size: number;
  timeoutMs: number;
  /** `explicit`, `env:<VAR>`, `topic:<name>`, `stage:<name>` or `global`. */
  source: { size: string; timeoutMs: string };
}

interface Candidate {
  readonly value: number;
  readonly source: string;
}

type Setting = 'size' | 'timeout_ms';

/**
 * Resolves the transaction batch size and collection timeout of one consumer. Highest first:
 * explicit caller values; KAFKA_TRANSACTION_BATCH_SIZE / KAFKA_TRANSACTION_BATCH_TIMEOUT_MS; the
 * exact `topics` entry; the `stages` entry under the full name, then the short name; the global
 * values. Size and timeout resolve independently. With several topics, the smallest effective
 * size and the smallest effective timeout across them apply.
 *
 * @throws {@link ConfigError} when a batch environment variable is malformed.
 * @throws RangeError when an explicit value is not a positive integer.
 */
export function resolveBatchSettings(request: BatchSettingsRequest): BatchSettings {
  const { batch, issues } = readBatchEnv(request.env ?? process.env);
  if (issues.length > 0) throw new ConfigError('env', issues);
  const size = resolve(request, 'size', explicitValue(request.explicit?.maxMessages, 'maxMessages'), {
    value: batch.size,
    variable: BATCH_ENV.size,
  });
  const timeout = resolve(request, 'timeout_ms', explicitValue(request.explicit?.timeoutMs, 'timeoutMs'), {
    value: batch.timeoutMs,
    variable: BATCH_ENV.timeoutMs,
  });
  return {
    size: size.value,
    timeoutMs: timeout.value,
    source: { size: size.source, timeoutMs: timeout.source },
  };
}

function explicitValue(value: number | undefined, name: string): number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new RangeError(`explicit ${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function resolve(
  request: BatchSettingsRequest,
  setting: Setting,
  explicit: number | undefined,
  fromEnv: { value: number | undefined; variable: string },
): Candidate {
  if (explicit !== undefined) return { value: explicit, source: 'explicit' };
  if (fromEnv.value !== undefined) return { value: fromEnv.value, source: `env:${fromEnv.variable}` };
  const batchConfig = request.config.environment.kafka_transaction_batch;
  const fallback = stageOrGlobal(request, setting);
  if (request.topics.length === 0) return fallback;
  // Topics are compared in the order given, so an equal value keeps the first topic's source.
  return request.topics
    .map((topic): Candidate => {
      const value = batchConfig.topics[topic]?.[setting];
      return value === undefined ? fallback : { value, source: `topic:${topic}` };
    })
    .reduce((smallest, candidate) => (candidate.value < smallest.value ? candidate : smallest));
}

function stageOrGlobal(request: BatchSettingsRequest, setting: Setting): Candidate {
  const batchConfig = request.config.environment.kafka_transaction_batch;
  const stages: Readonly<Record<string, { size?: number; timeout_ms?: number } | undefined>> =
    batchConfig.stages;
  const short = request.stage?.short;
  const names = [request.stage?.full ?? (short === undefined ? undefined : fullStageName(short)), short];
  for (const name of names) {
    const value = name === undefined ? undefined : stages[name]?.[setting];
    if (value !== undefined) return { value, source: `stage:${name}` };
  }
  return { value: batchConfig[setting], source: 'global' };
}
