import type { HamstringConfig } from '../../config/index.ts';
import { GENERIC_ALERTER } from '../../config/index.ts';
import { DecodeError, type ProcessResult, type Stage, type StageOutput } from '../../runtime/index.ts';
import { alertId } from '../detector/alerts.ts';
import { decodeAlert, type Alert } from '../messages.ts';
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

/**
 * An alert as it leaves HAMSTRING (file, external topic, webhook): the detector's Alert with its
 * stable `alert_id` first, which receivers use to drop repeats.
 */
export type OutgoingAlert = { readonly alert_id: string } & Alert;

/** The outgoing form of an alert sent by the alerter `alerter`. */
export function outgoingAlert(alert: Alert, alerter: string): OutgoingAlert {
  return { alert_id: alertId(alert, alerter), ...alert };
}

/** Decodes an outgoing alert (the external topic's records). @throws {DecodeError} */
export function decodeOutgoingAlert(value: Buffer | string | null): OutgoingAlert {
  let json: unknown;
  try {
    json = JSON.parse(value === null ? 'null' : value.toString());
  } catch (e) {
    throw new DecodeError('Alert: not JSON', { cause: e });
  }
  if (
    typeof json !== 'object' ||
    json === null ||
    typeof (json as { alert_id?: unknown }).alert_id !== 'string'
  )
    throw new DecodeError('Alert: alert_id: expected string');
  const { alert_id, ...alert } = json as { alert_id: string };
  return { alert_id, ...decodeAlert(JSON.stringify(alert)) };
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
      const toFile: OutgoingAlert[] = [];
      for (const record of records) {
        let adjusted: Alert | null;
        try {
          adjusted = plugin(decodeAlert(record.value));
        } catch (e) {
          failures.push({ record, error: e });
          continue;
        }
        if (adjusted === null) continue;
        const alert = outgoingAlert(adjusted, o.name);
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
