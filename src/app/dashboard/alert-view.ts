import { num, str, type Row } from './clickhouse-reader.ts';

/** An alert as the pages and the terminal show it. */
export interface AlertView {
  host: string;
  /** Epoch ms. */
  time: number;
  score: number;
  /** The detector instance that flagged the suspicious batch, or what the alert's result names. */
  detector: string;
  /** The family or kind the detector reported, when its result names one. */
  family: string;
  domains: string[];
  result: string;
  suspiciousBatchId: string;
}

/** `domain_names` holds a JSON array or a comma/space separated list; both read as a list. */
export function parseDomains(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed)) return parsed.map((d) => (typeof d === 'string' ? d : JSON.stringify(d)));
  } catch {
    // not JSON: a plain list
  }
  return trimmed.split(/[\s,]+/).filter((d) => d !== '');
}

const FAMILY_KEYS = ['family', 'dga_family', 'classification', 'type', 'kind'];
const DETECTOR_KEYS = ['detector_name', 'detector'];

/** The first string under one of `keys` in the result (an object, or an array of warning objects). */
function pick(result: unknown, keys: readonly string[]): string {
  const items = Array.isArray(result) ? result : [result];
  for (const item of items) {
    if (item === null || typeof item !== 'object') continue;
    for (const key of keys) {
      const v = (item as Record<string, unknown>)[key];
      if (typeof v === 'string' && v !== '') return v;
    }
  }
  return '';
}

/**
 * An alert row as the pages show it. `onlyDetector`: the one detector configured, whose alerts every
 * alert is; it names the detector of an alert whose suspicious batch's row at the detector stage
 * has not reached ClickHouse yet (the agent reads that table's topic in other batches).
 */
export function alertView(row: Row, onlyDetector = ''): AlertView {
  const result = str(row.result);
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    parsed = undefined;
  }
  return {
    host: str(row.client_ip),
    time: num(row.alert_timestamp),
    score: num(row.overall_score),
    detector: str(row.detector) || pick(parsed, DETECTOR_KEYS) || onlyDetector,
    family: pick(parsed, FAMILY_KEYS),
    domains: parseDomains(str(row.domain_names)),
    result,
    suspiciousBatchId: str(row.suspicious_batch_id),
  };
}
