import { createHash } from 'node:crypto';
import { MonitoringEvents } from '../../monitoring/events.ts';
import type { RecordPosition, StageOutput } from '../../runtime/index.ts';
import type { Alert, Batch, LogLine } from '../messages.ts';
import { domainOf } from './alerts.ts';

/** Where a detector writes: its alerter topics and the monitoring topic prefix. */
export interface DetectorTopics {
  readonly input: string;
  /** `<detector_to_alerter>-<alerter name>` per entry of `produce_topics`. */
  readonly alerts: readonly string[];
  readonly monitoringPrefix?: string;
}

/**
 * The outputs of one scored batch, all with the batch's record as source: each alert to every
 * alerter topic (keyed by host), and the monitoring rows (the suspicious batch's end at this stage,
 * each line's status, the batch's lineage, each alert).
 */
export function detectorOutputs(o: {
  source: RecordPosition;
  batch: Batch;
  /** The batch's own lines (context lines were recorded with their first batch). */
  lines: readonly LogLine[];
  alerts: readonly Alert[];
  flagged: ReadonlySet<string>;
  topics: DetectorTopics;
  stage: string;
  instanceName: string;
  now: number;
}): StageOutput[] {
  const events = new MonitoringEvents(o.topics.monitoringPrefix);
  const out: StageOutput[] = [];
  for (const alert of o.alerts) {
    for (const topic of o.topics.alerts)
      out.push({ topic, key: alert.src_ip, value: JSON.stringify(alert), source: o.source });
    out.push({
      ...events.emit('alerts', o.source, {
        client_ip: alert.src_ip,
        alert_timestamp: alert.alert_timestamp,
        suspicious_batch_id: alert.suspicious_batch_id,
        overall_score: alert.overall_score,
        domain_names: JSON.stringify([...new Set(alert.result.map((w) => domainOf(w.request) ?? ''))]),
        result: JSON.stringify(alert.result),
      }),
      source: o.source,
    });
  }
  const detected = o.alerts.length > 0;
  const hosts = [...new Set(o.lines.map((l) => l.src_ip))];
  out.push({
    ...events.emit('suspicious_batch_timestamps', o.source, {
      suspicious_batch_id: o.batch.batch_id,
      client_ip: hosts.join(','),
      stage: o.stage,
      instance_name: o.instanceName,
      status: detected ? 'detected' : 'finished',
      timestamp: o.now,
      is_active: false,
      message_count: o.lines.length,
    }),
    source: o.source,
  });
  for (const line of o.lines) {
    out.push({
      ...events.emit('logline_timestamps', o.source, {
        logline_id: line.logline_id,
        stage: o.stage,
        status: o.flagged.has(line.logline_id) ? 'detected' : 'finished',
        timestamp: o.now,
        is_active: false,
      }),
      source: o.source,
    });
  }
  out.push({
    ...events.emit('batch_tree', o.source, {
      batch_row_id: batchRowId(o.stage, o.batch.batch_id),
      stage: o.stage,
      instance_name: o.instanceName,
      status: detected ? 'detected' : 'finished',
      timestamp: o.now,
      parent_batch_row_id: o.batch.batch_tree_row_id ?? null,
      batch_id: o.batch.batch_id,
    }),
    source: o.source,
  });
  return out;
}

/** The lineage row id of a batch at a stage: derived, so a replay writes the same row. */
export function batchRowId(stage: string, batchId: string): string {
  return createHash('sha256').update(`${stage}\u0000${batchId}`).digest('hex').slice(0, 32);
}
