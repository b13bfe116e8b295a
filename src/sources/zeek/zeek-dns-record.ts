import { isIP } from 'node:net';
import type { DnsObservation } from '../dns-observation.ts';

/**
 * The fields of one Zeek `dns.log` row (Zeek's `DNS::Info` record, as Zeek 6.0 and 7.0 log it:
 * `ts uid id.orig_h id.orig_p id.resp_h id.resp_p proto trans_id rtt query qclass qclass_name qtype
 * qtype_name rcode rcode_name AA TC RD RA Z answers TTLs rejected`), already unescaped, as one
 * observation. A field Zeek left unset is `undefined`; `answers` is a vector of strings (addresses,
 * CNAME targets, TXT data). Only `ts`, `id.orig_h` and `query` are required; the rest is used when
 * present, so rows of older Zeek versions or with extra fields (policy scripts) decode too.
 */
export type ZeekValue = string | readonly string[] | undefined;
export type ZeekRow = ReadonlyMap<string, ZeekValue>;

export type ZeekDecoded = { ok: true; observation: DnsObservation } | { ok: false; reason: string };

export function observationOfZeekRow(row: ZeekRow, timeMicros: number | undefined): ZeekDecoded {
  if (timeMicros === undefined) return { ok: false, reason: 'field "ts": not a Zeek time' };
  const client = scalar(row, 'id.orig_h');
  if (client === undefined || isIP(client) === 0)
    return { ok: false, reason: 'field "id.orig_h": not an address' };
  const query = scalar(row, 'query');
  if (query === undefined || query === '') return { ok: false, reason: 'field "query": unset' };
  const qtypeName = scalar(row, 'qtype_name');
  const qtype = scalar(row, 'qtype');
  if (qtypeName === undefined && qtype === undefined)
    return { ok: false, reason: 'fields "qtype_name" and "qtype": unset' };
  const answers = list(row, 'answers');
  const server = scalar(row, 'id.resp_h');
  const proto = scalar(row, 'proto');
  return {
    ok: true,
    observation: {
      timeMicros,
      clientIp: client,
      clientPort: port(scalar(row, 'id.orig_p')),
      serverIp: server !== undefined && isIP(server) !== 0 ? server : undefined,
      serverPort: port(scalar(row, 'id.resp_p')),
      queryName: query.endsWith('.') ? query.slice(0, -1) : query,
      queryType: qtypeName ?? `TYPE${qtype ?? ''}`,
      responseCode: responseCode(row),
      answerIps: answers.filter((answer) => isIP(answer) !== 0),
      answers,
      transport: proto === 'udp' || proto === 'tcp' ? proto : undefined,
    },
  };
}

/** Zeek writes `rcode_name` when it saw a response; a numeric code without a name is kept as `RCODE<n>`. */
function responseCode(row: ZeekRow): string | undefined {
  const name = scalar(row, 'rcode_name');
  if (name !== undefined) return name;
  const code = scalar(row, 'rcode');
  return code === undefined ? undefined : `RCODE${code}`;
}

function scalar(row: ZeekRow, name: string): string | undefined {
  const value = row.get(name);
  return typeof value === 'string' ? value : undefined;
}

function list(row: ZeekRow, name: string): readonly string[] {
  const value = row.get(name);
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

function port(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 65535 ? n : undefined;
}
