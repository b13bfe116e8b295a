import { createHash } from 'node:crypto';
import { monitoringTopic } from '../../monitoring/events.ts';
import type { MonitoringRowBatch } from '../../monitoring/row-batch.ts';
import type { TableName } from '../../monitoring/tables.ts';
import type { RecordPosition, StageOutput } from '../../runtime/index.ts';
import type { DetectorConfig } from '../../config/index.ts';
import type { Alert, Batch } from '../messages.ts';
import { alertsFor, domainOf, type ScoredLine } from './alerts.ts';

/** Where a detector writes: its alerter topics and the monitoring topic prefix. */
export interface DetectorTopics {
  readonly input: string;
  /** `<detector_to_alerter>-<alerter name>` per entry of `produce_topics`. */
  readonly alerts: readonly string[];
  readonly monitoringPrefix?: string;
}

export const DETECTOR_STAGE = 'data_analysis.detector';

/** Monitoring tables a detector writes to (its declared output topics). */
export const DETECTOR_MONITORING_TABLES: readonly TableName[] = [
  'alerts',
  'suspicious_batch_timestamps',
  'logline_timestamps',
  'batch_tree',
];

/** Every topic a detector stage writes to: its alerter topics and its monitoring tables' topics. */
export function detectorOutputTopics(topics: DetectorTopics): string[] {
  return [
    ...topics.alerts,
    ...DETECTOR_MONITORING_TABLES.map((table) => monitoringTopic(table, topics.monitoringPrefix)),
  ];
}

/**
 * The outputs of one scored batch, all with the batch's record as source: the alerts its scored
 * lines make under the detector's `threshold` and `min_warnings`, each to every alerter topic
 * (keyed by host), and the monitoring rows (the suspicious batch's end at this stage, each line's
 * status, the batch's lineage, each alert).
 */
export function detectorOutputs(o: {
  source: RecordPosition;
  batch: Batch;
  /** The batch's own lines with their scores (context lines were recorded with their first batch). */
  scored: readonly ScoredLine[];
  detector: DetectorConfig;
  topics: DetectorTopics;
  instanceName: string;
  now: number;
  /** Where the monitoring rows go (the caller produces them once per call). */
  rows: MonitoringRowBatch;
  /**
   * The alerts this batch raises when the caller decided them (the DGA detector's event-time
   * windows, whose warnings may come from earlier batches); default: `alertsFor` this batch's
   * scored lines under `threshold` and `min_warnings`.
   */
  alerts?: readonly Alert[];
}): StageOutput[] {
  const alerts =
    o.alerts ??
    alertsFor(o.scored, {
      threshold: o.detector.threshold,
      minWarnings: o.detector.min_warnings,
      detectorName: o.detector.name,
      suspiciousBatchId: o.batch.batch_id,
      now: o.now,
    });
  const flagged = new Set(alerts.flatMap((a) => a.result.map((w) => w.request.logline_id)));
  const lines = o.scored.map((s) => s.line);
  const events = o.rows;
  const out: StageOutput[] = [];
  for (const alert of alerts) {
    for (const topic of o.topics.alerts)
      out.push({ topic, key: alert.src_ip, value: JSON.stringify(alert), source: o.source });
    events.emit('alerts', o.source, {
      client_ip: alert.src_ip,
      alert_timestamp: alert.alert_timestamp,
      suspicious_batch_id: alert.suspicious_batch_id,
      overall_score: alert.overall_score,
      domain_names: JSON.stringify([...new Set(alert.result.map((w) => domainOf(w.request) ?? ''))]),
      result: JSON.stringify(alert.result),
    });
  }
  const detected = alerts.length > 0;
  const hosts = [...new Set(lines.map((l) => l.src_ip))];
  events.emit('suspicious_batch_timestamps', o.source, {
    suspicious_batch_id: o.batch.batch_id,
    client_ip: hosts.join(','),
    stage: DETECTOR_STAGE,
    instance_name: o.instanceName,
    status: detected ? 'detected' : 'finished',
    timestamp: o.now,
    is_active: false,
    message_count: lines.length,
  });
  const own = new Set<string>();
  for (const line of lines) {
    own.add(line.logline_id);
    events.emit('logline_timestamps', o.source, {
      logline_id: line.logline_id,
      stage: DETECTOR_STAGE,
      status: flagged.has(line.logline_id) ? 'detected' : 'finished',
      timestamp: o.now,
      is_active: false,
    });
  }
  // Warnings of earlier batches that this batch's alert carries: their lines finished with their
  // own batch, and now every line of an alert is `detected` (the latest status wins).
  for (const id of flagged) {
    if (own.has(id)) continue;
    events.emit('logline_timestamps', o.source, {
      logline_id: id,
      stage: DETECTOR_STAGE,
      status: 'detected',
      timestamp: o.now,
      is_active: false,
    });
  }
  events.emit('batch_tree', o.source, {
    batch_row_id: batchRowId(DETECTOR_STAGE, o.batch.batch_id),
    stage: DETECTOR_STAGE,
    instance_name: o.instanceName,
    status: detected ? 'detected' : 'finished',
    timestamp: o.now,
    parent_batch_row_id: o.batch.batch_tree_row_id ?? null,
    batch_id: o.batch.batch_id,
  });
  return out;
}

/** The lineage row id of a batch at a stage: derived, so a replay writes the same row. */
export function batchRowId(stage: string, batchId: string): string {
  return createHash('sha256').update(`${stage}\u0000${batchId}`).digest('hex').slice(0, 32);
}
