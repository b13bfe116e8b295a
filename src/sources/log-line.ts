import type { DnsObservation, ObservationField } from './dns-observation.ts';

/**
 * Turns observations into the pipeline's log lines (one JSON object per line, the keys the
 * collector's `required_log_information` names) under a mapping given by configuration: each key of
 * the line names the observation field it takes, so a collector configured with other key names or
 * formats needs a mapping, not code.
 *
 * A field the observation lacks is left out of the line unless the spec gives `missing`; the
 * collector then rejects or accepts the line by its own rules, with its own reason.
 */
export interface LogLineFieldSpec {
  readonly from: ObservationField;
  /** For `timestamp`: a strftime format (`%Y %m %d %H %M %S %f %z %Z %s %%`). Default ISO 8601 with microseconds. */
  readonly format?: string;
  /** Appended to the value (HAMSTRING's own lines write sizes as `331b`). */
  readonly suffix?: string;
  /** The value when the observation has none; without it the key is left out. */
  readonly missing?: string;
}

export type LogLineMapping = Readonly<Record<string, LogLineFieldSpec>>;

/** The keys and formats of the shipped collector configuration (`config.yaml`). */
export const DEFAULT_LOG_LINE_MAPPING: LogLineMapping = {
  ts: { from: 'timestamp', format: '%Y-%m-%dT%H:%M:%S.%fZ' },
  status_code: { from: 'response_code' },
  src_ip: { from: 'client_ip' },
  dns_server_ip: { from: 'server_ip' },
  domain_name: { from: 'query_name' },
  record_type: { from: 'query_type' },
  response_ip: { from: 'answer_ip' },
  size: { from: 'response_size', suffix: 'b' },
};

/** The JSON text of one log line (no trailing newline). */
export function toLogLine(observation: DnsObservation, mapping: LogLineMapping): string {
  const line: Record<string, string> = {};
  for (const [key, spec] of Object.entries(mapping)) {
    const value = fieldValue(observation, spec);
    if (value !== undefined) line[key] = spec.suffix === undefined ? value : value + spec.suffix;
    else if (spec.missing !== undefined) line[key] = spec.missing;
  }
  return JSON.stringify(line);
}

function fieldValue(o: DnsObservation, spec: LogLineFieldSpec): string | undefined {
  switch (spec.from) {
    case 'timestamp':
      return formatTimestamp(o.timeMicros, spec.format ?? '%Y-%m-%dT%H:%M:%S.%fZ');
    case 'client_ip':
      return o.clientIp;
    case 'client_port':
      return numberText(o.clientPort);
    case 'server_ip':
      return o.serverIp;
    case 'server_port':
      return numberText(o.serverPort);
    case 'query_name':
      return o.queryName;
    case 'query_type':
      return o.queryType;
    case 'response_code':
      return o.responseCode;
    case 'answer_ip':
      return answerIp(o);
    case 'answer_ips':
      return o.answerIps.length === 0 ? undefined : o.answerIps.join(',');
    case 'answers':
      return o.answers.length === 0 ? undefined : o.answers.join(',');
    case 'query_size':
      return numberText(o.querySize);
    case 'response_size':
      return numberText(o.responseSize);
    case 'transport':
      return o.transport;
  }
}

/**
 * The first answer address; for an answered query without one (NXDOMAIN, NODATA, a CNAME chain
 * only) the unspecified address of the query's family, as HAMSTRING's own log lines write it. A
 * query whose response was never seen has none.
 */
function answerIp(o: DnsObservation): string | undefined {
  const first = o.answerIps[0];
  if (first !== undefined) return first;
  if (o.responseCode === undefined) return undefined;
  return o.queryType === 'AAAA' ? '::' : '0.0.0.0';
}

function numberText(n: number | undefined): string | undefined {
  return n === undefined ? undefined : String(n);
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** strftime over UTC for the directives sensors need; unknown directives are kept as written. */
export function formatTimestamp(micros: number, format: string): string {
  const ms = Math.floor(micros / 1000);
  const d = new Date(ms);
  return format.replace(/%([YmdHMSfzZs%])/g, (_, directive: string) => {
    switch (directive) {
      case 'Y':
        return pad(d.getUTCFullYear(), 4);
      case 'm':
        return pad(d.getUTCMonth() + 1, 2);
      case 'd':
        return pad(d.getUTCDate(), 2);
      case 'H':
        return pad(d.getUTCHours(), 2);
      case 'M':
        return pad(d.getUTCMinutes(), 2);
      case 'S':
        return pad(d.getUTCSeconds(), 2);
      case 'f':
        return pad(((micros % 1_000_000) + 1_000_000) % 1_000_000, 6);
      case 'z':
        return '+0000';
      case 'Z':
        return 'UTC';
      case 's':
        return String(Math.floor(micros / 1_000_000));
      default:
        return '%';
    }
  });
}
