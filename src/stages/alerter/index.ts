/** The alerting stages: what the application layer builds from `pipeline.alerting`. */
export { createAlerter, decodeOutgoingAlert, outgoingAlert, ALERTER_STAGE } from './alerter.ts';
export type { AlerterOptions, OutgoingAlert } from './alerter.ts';
export { AlertFileWriter } from './alert-file.ts';
export { createWebhookSink, WEBHOOK_STAGE, WebhookRefusedError, WebhookUnavailableError } from './webhook.ts';
export { ALERT_PLUGINS, alertPlugin, PluginConfigError } from './plugins.ts';
export type { AlertPlugin } from './plugins.ts';
