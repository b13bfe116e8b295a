import type { HamstringConfig } from '../../config/index.ts';
import { GENERIC_ALERTER } from '../../config/index.ts';
import {
  DecodeError,
  type ProcessResult,
  type Stage,
  type StageOutput,
  type StageRecord,
} from '../../runtime/index.ts';
import { alertSchema, type Alert } from '../detector/messages.ts';
import type { AlertFileWriter } from './alert-file.ts';
import { alertPlugin, type AlertPlugin } from './plugins.ts';

export const ALERTER_STAGE = 'data_alerting.alerter';

export interface AlerterOptions {
  readonly config: HamstringConfig;
  /** `generic` or the name of an entry of `pipeline.alerting.plugins`. */
  readonly name: string;
  /** Required when `log_to_file` is on; one per file and process (see {@link AlertFileWriter}). */
  readonly file?: AlertFileWriter;
}

export function decodeAlert(record: StageRecord): Alert {
  if (record.value === null) throw new DecodeError('empty record (expected an alert)');
  let json: unknown;
  try {
    json = JSON.parse(record.value.toString('utf8'));
  } catch (e) {
    throw new DecodeError(`not JSON: ${(e as Error).message}`);
  }
  const parsed = alertSchema.safeParse(json);
  if (!parsed.success)
    throw new DecodeError(
      `not an alert: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/**
 * The alerter named `name`: reads `<detector_to_alerter>-<name>`, lets its plugin (none for
 * `generic`) adjust or drop each alert, then
 * - produces it to `external_kafka_topic` (`log_to_kafka`): an output of the batch's transaction,
 *   so exactly once;
 * - appends it to `log_file_path` (`log_to_file`): a side effect before the commit, made
 *   idempotent by the alert id (the writer skips ids the file holds), so an aborted and replayed
 *   batch leaves each alert in the file once.
 * The webhook is not called here: it reads the external topic in its own at-least-once worker
 * (see `createWebhookSink`), so a slow or failing endpoint never holds alerts back from the topic.
 */
export function createAlerter(o: AlerterOptions): Stage {
  const alerting = o.config.pipeline.alerting;
  const prefixes = o.config.environment.kafka_topics_prefix.pipeline;
  let plugin: AlertPlugin = (alert) => alert;
  if (o.name !== GENERIC_ALERTER) {
    const index = alerting.plugins.findIndex((p) => p.name === o.name);
    const entry = alerting.plugins[index];
    if (!entry)
      throw new Error(
        `alerter ${JSON.stringify(o.name)}: expected "generic" or a name of pipeline.alerting.plugins`,
      );
    plugin = alertPlugin(entry, `pipeline.alerting.plugins[${index}]`);
  }
  if (alerting.log_to_file && !o.file)
    throw new Error('pipeline.alerting.log_to_file is true but the alerter was built without a file writer');
  const outputTopic = alerting.external_kafka_topic;
  return {
    name: ALERTER_STAGE,
    shortName: 'alerter',
    inputTopics: [`${prefixes.detector_to_alerter}-${o.name}`],
    outputTopics: alerting.log_to_kafka ? [outputTopic] : [],
    async process(records): Promise<ProcessResult> {
      const outputs: StageOutput[] = [];
      const failures: ProcessResult['failures'] = [];
      const toFile: Alert[] = [];
      for (const record of records) {
        let alert: Alert | null;
        try {
          alert = plugin(decodeAlert(record));
        } catch (e) {
          failures.push({ record, error: e });
          continue;
        }
        if (alert === null) continue;
        if (alerting.log_to_kafka)
          outputs.push({
            topic: outputTopic,
            key: alert.src_ip,
            value: JSON.stringify(alert),
            source: record,
          });
        if (alerting.log_to_file) toFile.push(alert);
      }
      if (toFile.length > 0) await o.file?.append(toFile);
      return { outputs, failures };
    },
  };
}
