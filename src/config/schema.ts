import { z } from 'zod';
import { dashboardSchema } from './dashboard-schema.ts';
import { endpointsSchema, healthHostSchema } from './endpoint-schema.ts';
import { environmentSchema } from './environment-schema.ts';
import { pipelineSchema } from './pipeline-schema.ts';
import { intBetween, nonEmptyString } from './value-schemas.ts';

const debugFlagSchema = z.strictObject({ debug: z.boolean().default(false) });

/** Log levels, applied by the application layer (`runStages`); HAMSTRING_LOG_LEVEL is final over `base`. */
const loggingSchema = z.strictObject({
  base: debugFlagSchema.prefault({}),
  /** Keyed by full module name, e.g. `data_analysis.detector`; `debug: true` lowers that stage to debug. */
  modules: z.record(nonEmptyString(), debugFlagSchema).default({}),
});

const runtimeSchema = z.strictObject({
  /** Stable identity of this worker process (transactional ids, static membership). */
  instance_id: nonEmptyString().optional(),
  /** HTTP port of the health endpoint; 0 disables it. */
  health_port: intBetween(0, 65535).default(0),
  health_host: healthHostSchema,
  /** Prometheus series on /metrics of the health port; false leaves /metrics empty (probes still served). */
  metrics: z.boolean().default(true),
  /** State stores of stateful stages: local copies and changelog topics. */
  state: z
    .strictObject({
      /** Root of the local copies (LMDB), one folder per group and instance under it. */
      dir: nonEmptyString().default('var/state'),
      /** Replication factor of new changelog topics; -1 takes the broker's default. */
      changelog_replication_factor: intBetween(-1, 32)
        .refine((n) => n !== 0, {
          error: 'integer between -1 and 32, not 0',
        })
        .default(-1),
      /** min.insync.replicas of new changelog topics; the broker's default when omitted. */
      changelog_min_insync_replicas: intBetween(1, 32).optional(),
    })
    .prefault({}),
});

/**
 * The whole of HAMSTRING's config.yaml. Every object is strict (an unknown key is an error);
 * defaults are defined here and nowhere else.
 */
export const hamstringConfigSchema = z.strictObject({
  logging: loggingSchema.prefault({}),
  pipeline: pipelineSchema.prefault({}),
  environment: environmentSchema,
  runtime: runtimeSchema.prefault({}),
  dashboard: dashboardSchema.prefault({}),
  endpoints: endpointsSchema.prefault({}),
});

/** A validated configuration with every default filled in. */
export type HamstringConfig = z.output<typeof hamstringConfigSchema>;
/** What config.yaml may contain (defaults still missing). */
export type HamstringConfigInput = z.input<typeof hamstringConfigSchema>;

type Pipeline = HamstringConfig['pipeline'];
export type CollectorConfig = Pipeline['log_collection']['collectors'][number];
export type BatchHandlerConfig = Pipeline['log_collection']['default_batch_handler_config'];
export type PrefilterConfig = Pipeline['log_filtering'][number];
export type InspectorConfig = Pipeline['data_inspection'][number];
export type DetectorConfig = Pipeline['data_analysis'][number];
export type AlertingConfig = Pipeline['alerting'];
export type MonitoringConfig = Pipeline['monitoring'];
export type EnvironmentConfig = HamstringConfig['environment'];
export type RuntimeConfig = HamstringConfig['runtime'];
export type { DashboardConfig } from './dashboard-schema.ts';
