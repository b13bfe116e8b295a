/** The alerting stages: what the application layer builds from `pipeline.alerting`. */
export { createAlerter, decodeOutgoingAlert, outgoingAlert, ALERTER_STAGE } from './alerter.ts';
export type { AlerterOptions, OutgoingAlert } from './alerter.ts';
export { AlertFileWriter } from './alert-file.ts';
export { createWebhookSink, WEBHOOK_STAGE, WebhookRefusedError, WebhookUnavailableError } from './webhook.ts';
export { ALERT_PLUGINS, alertPlugin, PluginConfigError } from './plugins.ts';
export type { AlertPlugin } from './plugins.ts';
export { createSyslogSink, SYSLOG_STAGE, SyslogMessageTooLargeError } from './syslog.ts';
export type { SyslogSink, SyslogSinkOptions } from './syslog.ts';
export { SyslogUnavailableError, tcpTransport, udpTransport } from './syslog-transport.ts';
export type { SyslogTransport } from './syslog-transport.ts';
export { alertToEcs, ECS_VERSION } from './ecs.ts';
