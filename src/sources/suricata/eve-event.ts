import { isIP } from 'node:net';
import { isoToMicros } from '../line-decoder.ts';

/**
 * One Suricata EVE `event_type: dns` line, read into the parts pairing needs. EVE DNS has had three
 * shapes, all read here:
 * - v1, per answer (Suricata 4.0 and older; 4.1 and 5.0 with `dns: version: 1`): a `query` event per
 *   question and one `answer` event per answer record (`rrname`, `rrtype`, `ttl`, `rdata` of that
 *   record, `rcode`), an answer without records (NXDOMAIN) being one event without `rdata`.
 * - v2 (added in 4.1, the default from 5.0, the only one in 6 and 7): `"version": 2`, one `answer`
 *   event per response with the records as `answers` (detailed) and/or `grouped` (`{"A": [...]}`).
 * - v3 (Suricata 8): `"version": 3`, `request`/`response` events with the questions as `queries`.
 */
export interface EveQuery {
  readonly kind: 'query';
  readonly key: string;
  readonly timeMicros: number;
  readonly endpoints: Endpoints;
  readonly name: string;
  readonly type: string;
}

export interface EveAnswer {
  readonly kind: 'answer';
  /** `per-record`: a v1 event carrying one record of a response whose records follow as more events. */
  readonly shape: 'per-record' | 'whole';
  readonly key: string;
  readonly timeMicros: number;
  readonly endpoints: Endpoints;
  readonly name?: string;
  readonly type?: string;
  readonly rcode?: string;
  readonly records: readonly AnswerRecord[];
}

export interface AnswerRecord {
  readonly name?: string;
  readonly type?: string;
  readonly data: string;
}

export interface Endpoints {
  readonly srcIp: string;
  readonly srcPort?: number;
  readonly destIp?: string;
  readonly destPort?: number;
  readonly transport?: 'udp' | 'tcp';
}

export type EveLine = EveQuery | EveAnswer | { kind: 'other' } | { kind: 'bad'; reason: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function readEveLine(text: string): EveLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'bad', reason: 'not JSON' };
  }
  if (!isObject(parsed)) return { kind: 'bad', reason: 'not a JSON object' };
  if (parsed.event_type !== 'dns') return { kind: 'other' };
  const dns = parsed.dns;
  if (!isObject(dns)) return { kind: 'bad', reason: 'field "dns": not an object' };
  const timestamp = str(parsed.timestamp);
  const timeMicros = timestamp === undefined ? undefined : isoToMicros(timestamp);
  if (timeMicros === undefined) return { kind: 'bad', reason: 'field "timestamp": not an ISO 8601 time' };
  const srcIp = str(parsed.src_ip);
  if (srcIp === undefined || isIP(srcIp) === 0)
    return { kind: 'bad', reason: 'field "src_ip": not an address' };
  const proto = str(parsed.proto)?.toLowerCase();
  const endpoints: Endpoints = {
    srcIp,
    srcPort: num(parsed.src_port),
    destIp: str(parsed.dest_ip),
    destPort: num(parsed.dest_port),
    transport: proto === 'udp' || proto === 'tcp' ? proto : undefined,
  };
  const key = pairKey(parsed, dns, endpoints);
  const type = str(dns.type);
  const question = firstQuestion(dns);
  if (type === 'query' || type === 'request') {
    if (question.name === undefined || question.type === undefined)
      return { kind: 'bad', reason: 'a DNS query event without "rrname" and "rrtype"' };
    return { kind: 'query', key, timeMicros, endpoints, name: question.name, type: question.type };
  }
  if (type !== 'answer' && type !== 'response') return { kind: 'bad', reason: `field "dns.type": "${type}"` };
  const whole = dns.version !== undefined || 'answers' in dns || 'grouped' in dns;
  const records = whole ? wholeRecords(dns) : perRecord(dns);
  if (typeof records === 'string') return { kind: 'bad', reason: records };
  return {
    kind: 'answer',
    shape: whole ? 'whole' : 'per-record',
    key,
    timeMicros,
    endpoints,
    ...question,
    rcode: str(dns.rcode),
    records,
  };
}

/** The question: `rrname`/`rrtype` of v1 and v2 events, `queries[0]` of v3. */
function firstQuestion(dns: Json): { name?: string; type?: string } {
  const queries = Array.isArray(dns.queries) ? dns.queries : [];
  const first: unknown = queries[0];
  const source = isObject(first) ? first : dns;
  return { name: str(source.rrname), type: str(source.rrtype) };
}

function perRecord(dns: Json): AnswerRecord[] {
  const data = str(dns.rdata);
  return data === undefined ? [] : [{ name: str(dns.rrname), type: str(dns.rrtype), data }];
}

function wholeRecords(dns: Json): AnswerRecord[] | string {
  const records: AnswerRecord[] = [];
  if (dns.answers !== undefined) {
    if (!Array.isArray(dns.answers)) return 'field "dns.answers": not an array';
    for (const answer of dns.answers as unknown[]) {
      if (!isObject(answer)) return 'field "dns.answers": an entry is not an object';
      const data = str(answer.rdata);
      if (data !== undefined) records.push({ name: str(answer.rrname), type: str(answer.rrtype), data });
    }
    return records;
  }
  if (dns.grouped !== undefined) {
    if (!isObject(dns.grouped)) return 'field "dns.grouped": not an object';
    for (const [type, values] of Object.entries(dns.grouped)) {
      if (!Array.isArray(values)) return `field "dns.grouped.${type}": not an array`;
      for (const data of values as unknown[]) if (typeof data === 'string') records.push({ type, data });
    }
  }
  return records;
}

/** A query and its answer share the flow and the DNS message id (`flow_id` where Suricata wrote it). */
function pairKey(event: Json, dns: Json, e: Endpoints): string {
  const id = num(dns.id) ?? -1;
  const flow = num(event.flow_id) ?? str(event.flow_id);
  if (flow !== undefined) return `${flow}/${id}`;
  const ends = [`${e.srcIp}:${e.srcPort ?? ''}`, `${e.destIp ?? ''}:${e.destPort ?? ''}`].sort();
  return `${ends.join('-')}/${id}`;
}
