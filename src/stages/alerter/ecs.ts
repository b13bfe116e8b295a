import { domainOf } from '../detector/alerts.ts';
import type { OutgoingAlert } from './alerter.ts';

/**
 * An alert in the Elastic Common Schema (ECS), the JSON a SOC's SIEM reads without a parser of its
 * own: Elastic Security and OpenSearch index it as is, Wazuh, Graylog and Splunk map it by name.
 * ECS over OCSF because an alert here is one host and the DNS names it resolved, which ECS has flat
 * fields for (`source.ip`, `dns.question.name`, `related.hosts`, `threat.technique`), while OCSF's
 * Detection Finding needs numeric class, category, activity and type ids and nested finding and
 * resource objects that its consumers expect to be filled by a vendor's mapping.
 *
 * Mapping (docs/detection.md, Alerter):
 * - time: `@timestamp` and `event.created` are the alert's time; `event.start`/`event.end` the
 *   event-time window (or the first and last warning's `ts`);
 * - host: `source.ip` and `host.ip` the alerted host; `related.ip` it and the resolvers it asked;
 * - domains: `dns.question.name` the highest-scoring name, `related.hosts` every name kept, and per name
 *   its score, time, answer and record type under `hamstring.warnings` (highest score first);
 * - scores: `event.risk_score` and `event.risk_score_norm` the overall score x 100;
 * - family attribution: `hamstring.kind` and `hamstring.kind_confidence`, and the MITRE ATT&CK
 *   technique of the detector (DGA: T1568.002; tunnelling: T1071.004) under `threat.*`;
 * - identity: `event.id` the alert id (stable across replays: receivers drop repeats by it),
 *   `rule.name` the detector, `observer.*` this HAMSTRING.
 */
export const ECS_VERSION = '8.11.0';

export interface EcsOptions {
  /** `detector_class_name` of the alert's detector, when the config has it. */
  readonly detectorClass?: string;
  /** `observer.hostname`. */
  readonly observerHostname: string;
  /** Keep only this many warnings (highest scores first); the rest are counted as omitted. */
  readonly keepWarnings?: number;
}

const TACTIC_C2 = {
  id: ['TA0011'],
  name: ['Command and Control'],
  reference: ['https://attack.mitre.org/tactics/TA0011/'],
};

const TECHNIQUES: Readonly<Record<string, { category: string; what: string; technique: object }>> = {
  DGADetector: {
    category: 'DGA',
    what: 'DGA activity',
    technique: {
      id: ['T1568'],
      name: ['Dynamic Resolution'],
      reference: ['https://attack.mitre.org/techniques/T1568/'],
      subtechnique: {
        id: ['T1568.002'],
        name: ['Domain Generation Algorithms'],
        reference: ['https://attack.mitre.org/techniques/T1568/002/'],
      },
    },
  },
  DomainatorDetector: {
    category: 'DNS tunnelling',
    what: 'DNS tunnelling',
    technique: {
      id: ['T1071'],
      name: ['Application Layer Protocol'],
      reference: ['https://attack.mitre.org/techniques/T1071/'],
      subtechnique: {
        id: ['T1071.004'],
        name: ['DNS'],
        reference: ['https://attack.mitre.org/techniques/T1071/004/'],
      },
    },
  },
};

/** One warning under `hamstring.warnings`. */
interface EcsWarning {
  readonly domain: string;
  readonly score: number;
  readonly ts: string;
  readonly status_code?: string;
  readonly record_type?: string;
  readonly dns_server_ip?: string;
}

/** The ECS document of one alert. */
export function alertToEcs(alert: OutgoingAlert, o: EcsOptions): Record<string, unknown> {
  const warnings: EcsWarning[] = alert.result
    .map((w) => ({
      domain: domainOf(w.request) ?? '',
      score: w.probability,
      ts: w.request.ts,
      ...optionalString('status_code', w.request.status_code),
      ...optionalString('record_type', w.request.record_type),
      ...optionalString('dns_server_ip', w.request.dns_server_ip),
    }))
    .sort((a, b) => b.score - a.score || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
  const kept = warnings.slice(0, o.keepWarnings ?? warnings.length);
  const times = warnings.map((w) => w.ts).sort();
  const hosts = [...new Set(kept.map((w) => w.domain).filter((d) => d !== ''))];
  const resolvers = [...new Set(kept.flatMap((w) => (w.dns_server_ip ? [w.dns_server_ip] : [])))];
  const known = o.detectorClass === undefined ? undefined : TECHNIQUES[o.detectorClass];
  const risk = Math.round(alert.overall_score * 10_000) / 100;
  const kind =
    alert.kind === undefined
      ? ''
      : ` (${alert.kind}${alert.kind_confidence === undefined ? '' : `, confidence ${alert.kind_confidence.toFixed(2)}`})`;
  return {
    '@timestamp': alert.alert_timestamp,
    ecs: { version: ECS_VERSION },
    message:
      `${known?.what ?? 'DNS anomaly'} from ${alert.src_ip}: ${warnings.length} suspicious ` +
      `name${warnings.length === 1 ? '' : 's'}, score ${alert.overall_score.toFixed(3)}${kind}`,
    event: {
      kind: 'alert',
      category: ['network', 'intrusion_detection'],
      type: ['info'],
      id: alert.alert_id,
      module: 'hamstring',
      dataset: 'hamstring.alert',
      provider: alert.detector_name,
      created: alert.alert_timestamp,
      ...optionalString('start', alert.window_start ?? times[0]),
      ...optionalString('end', alert.window_end ?? times[times.length - 1]),
      risk_score: risk,
      risk_score_norm: risk,
    },
    rule: {
      name: alert.detector_name,
      ruleset: 'hamstring',
      ...(known ? { category: known.category } : {}),
    },
    ...(known
      ? { threat: { framework: 'MITRE ATT&CK', tactic: TACTIC_C2, technique: known.technique } }
      : {}),
    source: { ip: alert.src_ip },
    host: { ip: [alert.src_ip] },
    ...(kept[0] ? { dns: { question: { name: kept[0].domain } } } : {}),
    related: { ip: [alert.src_ip, ...resolvers], hosts },
    observer: { vendor: 'HAMSTRING', product: 'HAMSTRING', type: 'ids', hostname: o.observerHostname },
    hamstring: {
      alert_id: alert.alert_id,
      detector: alert.detector_name,
      suspicious_batch_id: alert.suspicious_batch_id,
      overall_score: alert.overall_score,
      ...(alert.kind === undefined ? {} : { kind: alert.kind }),
      ...(alert.kind_confidence === undefined ? {} : { kind_confidence: alert.kind_confidence }),
      warnings: kept,
      warnings_total: warnings.length,
      warnings_omitted: warnings.length - kept.length,
    },
  };
}

function optionalString(key: string, value: unknown): Record<string, string> {
  return typeof value === 'string' && value !== '' ? { [key]: value } : {};
}
