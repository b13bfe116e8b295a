import { z } from 'zod';
import { addProblem } from './refinements.ts';
import { syslogSchema } from './syslog-schema.ts';
import { componentName, nonEmptyString, positiveInt, topicName } from './value-schemas.ts';

/**
 * `pipeline.alerting`: where alerts go (a file, the external Kafka topic and the sinks that read it:
 * webhook, syslog) and the alerter plugins.
 */
const alerterPluginSchema = z.strictObject({
  name: componentName(),
  alerter_module_name: nonEmptyString(),
  alerter_class_name: nonEmptyString(),
  /** Plugin-specific settings (flat keys in the Python config; nested here so typos stay errors). */
  options: z.record(z.string(), z.unknown()).default({}),
});

/** The always-present alerter; plugins add more, each consuming `<detector_to_alerter>-<name>`. */
export const GENERIC_ALERTER = 'generic';

const webhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'http(s) URL' }),
  /** Extra request headers (e.g. Authorization). */
  headers: z.record(z.string(), z.string()).default({}),
  /** One POST may take this long before it counts as failed and is retried. */
  timeout_ms: positiveInt(600_000).default(10_000),
});

export const alertingSchema = z
  .strictObject({
    log_to_file: z.boolean().default(false),
    log_file_path: nonEmptyString().default('/opt/logs/alerts.txt'),
    log_to_kafka: z.boolean().default(false),
    external_kafka_topic: topicName().default('hamstring_alerts'),
    plugins: z.array(alerterPluginSchema).default([]),
    /**
     * POSTs each alert of `external_kafka_topic` (so it needs `log_to_kafka`), at least once, with
     * the alert id as `Idempotency-Key`; retries and dead letters follow `environment.record_errors`.
     */
    webhook: webhookSchema.optional(),
    /** RFC 5424 syslog with an ECS JSON body, at least once (src/config/syslog-schema.ts). */
    syslog: syslogSchema.optional(),
  })
  .superRefine((alerting, ctx) => {
    if (alerting.webhook !== undefined && !alerting.log_to_kafka)
      addProblem(ctx, ['log_to_kafka'], 'true (alerting.webhook reads external_kafka_topic)', false);
    if (alerting.syslog !== undefined && !alerting.log_to_kafka)
      addProblem(ctx, ['log_to_kafka'], 'true (alerting.syslog reads external_kafka_topic)', false);
  });
