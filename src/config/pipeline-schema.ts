import { z } from 'zod';
import { checkInspectorModels, INSPECTOR_CLASSES } from './inspector-models.ts';
import {
  checkOptionalAgainstRequired,
  optionalLogInformationSchema,
  requiredLogInformationSchema,
} from './log-line-format.ts';
import { addProblem, asArray, asRecord } from './refinements.ts';
import { sensorsSchema } from './sensors-schema.ts';
import { alertingSchema, GENERIC_ALERTER } from './alerting-schema.ts';
import { logserverSchema, zeekSchema } from './source-schema.ts';
import { detectorSchema } from './detector-schema.ts';
import {
  componentName,
  fraction,
  intBetween,
  modelArgs,
  nonEmptyString,
  positiveInt,
  positiveNumber,
} from './value-schemas.ts';

const ipv4PrefixLength = () => intBetween(0, 32);
const ipv6PrefixLength = () => intBetween(0, 128);

/**
 * Not in the Python config: bytes one encoded batch (its lines and its context) may take. At least
 * 64 KiB, so that the longest line `max_line_bytes` allows by default fits in half of it; at most
 * 990,000, below the producer's `message.max.bytes` (librdkafka's 1,000,000, which the runtime keeps)
 * by room for the record's key and framing. A larger batch would be refused by Kafka.
 */
export const MAX_BATCH_BYTES_RANGE = { min: 65_536, max: 990_000 } as const;
const maxBatchBytes = () => intBetween(MAX_BATCH_BYTES_RANGE.min, MAX_BATCH_BYTES_RANGE.max);

const batchHandlerConfigSchema = z.strictObject({
  batch_size: positiveInt().default(2000),
  /** Seconds. */
  batch_timeout: positiveNumber().default(30),
  max_batch_bytes: maxBatchBytes().default(900_000),
  subnet_id: z
    .strictObject({
      ipv4_prefix_length: ipv4PrefixLength().default(24),
      ipv6_prefix_length: ipv6PrefixLength().default(64),
    })
    .prefault({}),
});

const batchHandlerOverrideSchema = z.strictObject({
  batch_size: positiveInt().optional(),
  batch_timeout: positiveNumber().optional(),
  max_batch_bytes: maxBatchBytes().optional(),
  subnet_id: z
    .strictObject({
      ipv4_prefix_length: ipv4PrefixLength().optional(),
      ipv6_prefix_length: ipv6PrefixLength().optional(),
    })
    .optional(),
});

const collectorSchema = z
  .strictObject({
    name: componentName(),
    protocol_base: componentName(),
    required_log_information: requiredLogInformationSchema,
    /** Not in the Python config: fields checked only when a line has them. */
    optional_log_information: optionalLogInformationSchema.default([]),
    batch_handler_config_override: batchHandlerOverrideSchema.optional(),
    /** Not in the Python config: longer lines are recorded as failed without being parsed. */
    max_line_bytes: positiveInt(1_048_576).default(16_384),
  })
  .superRefine(
    (c, ctx) =>
      checkOptionalAgainstRequired(
        ctx,
        asRecord(c)?.required_log_information,
        asRecord(c)?.optional_log_information,
      ),
    { when: () => true },
  );

const prefilterSchema = z.strictObject({
  name: componentName(),
  /**
   * `check_dga_relevance`: the collector's relevant ListItem values only (NXDOMAIN);
   * `check_tunnel_relevance`: names the Domainator can window (a subdomain under an Internet domain
   * outside lookup and provider zones), whatever the answer; `no_relevance_check`: every line.
   */
  relevance_method: z.enum(['check_dga_relevance', 'check_tunnel_relevance', 'no_relevance_check']),
  collector_name: nonEmptyString(),
});

const streamModelSchema = z.strictObject({
  model: nonEmptyString(),
  module: nonEmptyString(),
  model_args: modelArgs(),
});

const inspectorSchema = z
  .strictObject({
    name: componentName(),
    inspector_module_name: nonEmptyString(),
    inspector_class_name: z.enum(INSPECTOR_CLASSES),
    prefilter_name: nonEmptyString(),
    mode: z.enum(['univariate', 'multivariate', 'ensemble']).default('univariate'),
    models: z.array(streamModelSchema).default([]),
    /** Only used with `mode: ensemble`. */
    ensemble: streamModelSchema.optional(),
    /** Share of bins with score >= score_threshold above which a batch is suspicious. */
    anomaly_threshold: fraction().default(0.01),
    score_threshold: z.number({ error: 'number >= 0' }).min(0, { error: 'number >= 0' }).default(0.5),
    /** numpy time unit of one bin. */
    time_type: z.enum(['ns', 'us', 'ms', 's', 'm', 'h', 'D']).default('ms'),
    time_range: positiveInt().default(20),
  })
  .superRefine((inspector, ctx) => {
    checkInspectorModels(inspector, ctx);
    if (inspector.mode !== 'ensemble') return;
    if (inspector.ensemble === undefined) {
      addProblem(ctx, ['ensemble'], '{model, module, model_args} (mode is ensemble)', undefined);
    }
    if (inspector.models.length === 0) {
      addProblem(ctx, ['models'], 'at least one model to combine (mode is ensemble)', inspector.models);
    }
  });

const monitoringSchema = z.strictObject({
  clickhouse_connector: z
    .strictObject({
      /** Rows per ClickHouse insert, at most (each insert is a part ClickHouse merges). */
      batch_size: positiveInt().default(1000),
      /** Seconds before a partial insert is flushed. */
      batch_timeout: positiveNumber().default(2),
      connect_timeout_seconds: positiveNumber().default(10),
      operation_timeout_seconds: positiveNumber().default(30),
    })
    .prefault({}),
  /** Kafka records per monitoring-agent batch (one offset commit each; it bounds each table's insert). */
  kafka_batch: z
    .strictObject({
      size: positiveInt().default(5000),
      timeout_ms: positiveInt().default(1000),
    })
    .prefault({}),
});

/** `pipeline`: the stages, their instances and how they hand data on. */
export const pipelineSchema = z
  .strictObject({
    log_storage: z
      .strictObject({
        logserver: logserverSchema.prefault({}),
      })
      .prefault({}),
    zeek: zeekSchema.optional(),
    log_collection: z
      .strictObject({
        default_batch_handler_config: batchHandlerConfigSchema.prefault({}),
        collectors: z.array(collectorSchema).default([]),
      })
      .prefault({}),
    log_filtering: z.array(prefilterSchema).default([]),
    data_inspection: z.array(inspectorSchema).default([]),
    data_analysis: z.array(detectorSchema).default([]),
    alerting: alertingSchema.prefault({}),
    monitoring: monitoringSchema.prefault({}),
    /** Live DNS sources feeding the logserver's input (src/config/sensors-schema.ts). */
    sensors: sensorsSchema,
  })
  .superRefine((pipeline, ctx) => checkReferences(pipeline, ctx), { when: () => true });

// Runs even when entries are invalid (reading them defensively) so that a dangling reference is
// reported together with the other problems.
function checkReferences(value: unknown, ctx: z.RefinementCtx<unknown>): void {
  const pipeline = asRecord(value);
  if (!pipeline) return;
  const collectors = asArray(asRecord(pipeline.log_collection)?.collectors);
  const prefilters = asArray(pipeline.log_filtering);
  const inspectors = asArray(pipeline.data_inspection);
  const detectors = asArray(pipeline.data_analysis);
  const plugins = asArray(asRecord(pipeline.alerting)?.plugins);

  const collectorNames = uniqueNames(ctx, collectors, ['log_collection', 'collectors']);
  const prefilterNames = uniqueNames(ctx, prefilters, ['log_filtering']);
  const inspectorNames = uniqueNames(ctx, inspectors, ['data_inspection']);
  uniqueNames(ctx, detectors, ['data_analysis']);
  const alerterNames = uniqueNames(ctx, plugins, ['alerting', 'plugins'], [GENERIC_ALERTER]);

  checkReference(
    ctx,
    prefilters,
    ['log_filtering'],
    'collector_name',
    collectorNames,
    'pipeline.log_collection.collectors',
  );
  checkReference(
    ctx,
    inspectors,
    ['data_inspection'],
    'prefilter_name',
    prefilterNames,
    'pipeline.log_filtering',
  );
  checkReference(
    ctx,
    detectors,
    ['data_analysis'],
    'inspector_name',
    inspectorNames,
    'pipeline.data_inspection',
  );

  detectors.forEach((detector, index) => {
    const produce = asRecord(detector)?.produce_topics;
    const names =
      typeof produce === 'string' ? produce.split(',').map((name) => name.trim()) : asArray(produce);
    const unknown = names.filter(
      (name) => typeof name === 'string' && name !== '' && !alerterNames.includes(name),
    );
    if (unknown.length > 0) {
      addProblem(
        ctx,
        ['data_analysis', index, 'produce_topics'],
        `alerter names among ${alerterNames.map((name) => JSON.stringify(name)).join(', ')}`,
        produce,
        `no alerter consumes ${unknown.map((name) => JSON.stringify(name)).join(', ')}; add it to pipeline.alerting.plugins`,
      );
    }
  });
}

function uniqueNames(
  ctx: z.RefinementCtx<unknown>,
  entries: readonly unknown[],
  path: readonly PropertyKey[],
  taken: readonly string[] = [],
): string[] {
  const names = [...taken];
  entries.forEach((entry, index) => {
    const name = asRecord(entry)?.name;
    if (typeof name !== 'string') return;
    if (names.includes(name)) {
      const note = taken.includes(name) ? `"${name}" is reserved` : `"${name}" is already used`;
      addProblem(ctx, [...path, index, 'name'], 'unique name', name, note);
    } else names.push(name);
  });
  return names;
}

function checkReference(
  ctx: z.RefinementCtx<unknown>,
  entries: readonly unknown[],
  path: readonly PropertyKey[],
  key: string,
  targets: readonly string[],
  targetPath: string,
): void {
  entries.forEach((entry, index) => {
    const reference = asRecord(entry)?.[key];
    if (typeof reference !== 'string' || targets.includes(reference)) return;
    const known =
      targets.length > 0 ? targets.map((name) => JSON.stringify(name)).join(', ') : 'none defined';
    addProblem(ctx, [...path, index, key], `name of an entry of ${targetPath} (${known})`, reference);
  });
}
