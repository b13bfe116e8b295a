import { hostname as machineName } from 'node:os';
import type { HamstringConfig } from '../../config/index.ts';
import { SYSLOG_FACILITIES, SYSLOG_SEVERITIES } from '../../config/index.ts';
import { NonRetryableError, type ProcessResult, type Stage, type StageRecord } from '../../runtime/index.ts';
import { decodeOutgoingAlert, type OutgoingAlert } from './alerter.ts';
import { alertToEcs } from './ecs.ts';
import { asciiJson, syslogMessage, type SyslogHeader } from './syslog-message.ts';
import { tcpTransport, udpTransport, type SyslogTransport } from './syslog-transport.ts';

export const SYSLOG_STAGE = 'data_alerting.syslog';

/** An alert that does not fit `max_message_bytes` even without its names: dead-lettered at once. */
export class SyslogMessageTooLargeError extends NonRetryableError {
  override readonly name = 'SyslogMessageTooLargeError';
  override readonly code = 'SYSLOG_MESSAGE_TOO_LARGE';
  constructor(message: string) {
    super(message, 'syslog-too-large');
  }
}

export interface SyslogSinkOptions {
  readonly config: HamstringConfig;
  /** Injected in tests; otherwise UDP or TCP as `pipeline.alerting.syslog.transport` says. */
  readonly transport?: SyslogTransport;
}

/** The sink stage and the connection it keeps. */
export type SyslogSink = Stage & { close(): Promise<void> };

/**
 * A sink for a worker in `at-least-once` mode, like the webhook's: reads `external_kafka_topic` and
 * sends each alert as one RFC 5424 message whose MSG is the alert in ECS JSON (`alertToEcs`) and whose
 * structured data carries the alert id, host, score and detector. Per partition, a batch's messages
 * go out in order in one send; the offsets commit only after it succeeded. When the send fails
 * (receiver down, connection reset, no ICMP-free UDP wait) every record of that partition's batch
 * fails with {@link SyslogUnavailableError}: the runtime pauses the partition and retries from its
 * first record with the `environment.record_errors` back-off, then dead-letters, so no alert is
 * dropped unseen, and one may arrive twice (same `event.id`). An alert too large for
 * `max_message_bytes` loses its lowest-scoring names (counted in `hamstring.warnings_omitted`).
 */
export function createSyslogSink(o: SyslogSinkOptions): SyslogSink {
  const alerting = o.config.pipeline.alerting;
  const syslog = alerting.syslog;
  if (!syslog) throw new Error('pipeline.alerting.syslog: expected {host, ...} to run the syslog sink');
  const transport =
    o.transport ??
    (syslog.transport === 'udp'
      ? udpTransport({ host: syslog.host, port: syslog.port, errorWaitMs: syslog.udp_error_wait_ms })
      : tcpTransport({ host: syslog.host, port: syslog.port, timeoutMs: syslog.timeout_ms }));
  const hostname = syslog.hostname ?? machineName();
  const header: Omit<SyslogHeader, 'msgId'> = {
    facility: SYSLOG_FACILITIES[syslog.facility],
    severity: SYSLOG_SEVERITIES[syslog.severity],
    hostname,
    appName: syslog.app_name,
    procId: String(process.pid),
  };
  const detectorClass = new Map(o.config.pipeline.data_analysis.map((d) => [d.name, d.detector_class_name]));

  const messageFor = (alert: OutgoingAlert): string => {
    const params: [string, string][] = [
      ['alertId', alert.alert_id],
      ['srcIp', alert.src_ip],
      ['score', alert.overall_score.toFixed(4)],
      ['detector', alert.detector_name],
      ['names', String(alert.result.length)],
      ...(alert.kind === undefined ? [] : [['kind', alert.kind] as [string, string]]),
    ];
    const cls = detectorClass.get(alert.detector_name);
    for (let keep = alert.result.length; ; keep = Math.floor(keep / 2)) {
      const body = asciiJson(
        alertToEcs(alert, {
          observerHostname: hostname,
          keepWarnings: keep,
          ...(cls === undefined ? {} : { detectorClass: cls }),
        }),
      );
      const message = syslogMessage(
        { ...header, msgId: alert.detector_name },
        alert.alert_timestamp,
        syslog.sd_id,
        params,
        body,
      );
      if (Buffer.byteLength(message) <= syslog.max_message_bytes) return message;
      if (keep === 0)
        throw new SyslogMessageTooLargeError(
          `alert ${alert.alert_id}: ${Buffer.byteLength(message)} bytes without its names, more than max_message_bytes (${syslog.max_message_bytes})`,
        );
    }
  };

  return {
    name: SYSLOG_STAGE,
    shortName: 'alerter',
    inputTopics: [alerting.external_kafka_topic],
    outputTopics: [],
    async process(records, ctx): Promise<ProcessResult> {
      const failures: ProcessResult['failures'] = [];
      const byPartition = new Map<string, { record: StageRecord; message: string }[]>();
      for (const record of records) {
        try {
          const message = messageFor(decodeOutgoingAlert(record.value));
          const key = `${record.topic}:${record.partition}`;
          const list = byPartition.get(key) ?? [];
          list.push({ record, message });
          byPartition.set(key, list);
        } catch (e) {
          failures.push({ record, error: e });
        }
      }
      for (const list of byPartition.values()) {
        try {
          await transport.send(
            list.map((m) => m.message),
            ctx.signal,
          );
        } catch (e) {
          for (const { record } of list) failures.push({ record, error: e });
        }
      }
      return { outputs: [], failures };
    },
    close: () => transport.close(),
  };
}
