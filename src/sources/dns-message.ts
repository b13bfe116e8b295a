import dnsPacket from 'dns-packet';

/**
 * One DNS wire-format message (RFC 1035), parsed with `dns-packet`, reduced to what an observation
 * needs. A message that does not parse (truncated, a name pointer out of range) is reported with a
 * reason, never thrown; a record of a type the library does not know is kept as `TYPE<n>` and
 * counted, since new types appear on the wire before libraries learn them.
 */
export interface ParsedDns {
  readonly id: number;
  readonly isResponse: boolean;
  readonly queryName: string;
  readonly queryType: string;
  readonly responseCode: string;
  readonly answerIps: string[];
  readonly answers: string[];
  /** Question and answer records whose type the library does not know. */
  readonly unknownTypes: number;
}

const typeName = (type: string): string => (type.startsWith('UNKNOWN_') ? `TYPE${type.slice(8)}` : type);

export function parseDns(bytes: Uint8Array): ParsedDns | string {
  let packet: dnsPacket.Packet;
  try {
    const buf = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    packet = dnsPacket.decode(buf);
  } catch (e) {
    return `DNS message of ${bytes.length} bytes does not parse: ${e instanceof Error ? e.message : String(e)}`;
  }
  const question = packet.questions?.[0];
  if (question === undefined) return 'DNS message without a question';
  let unknownTypes = question.type.startsWith('UNKNOWN_') ? 1 : 0;
  const answerIps: string[] = [];
  const answers: string[] = [];
  for (const answer of packet.answers ?? []) {
    if (answer.type.startsWith('UNKNOWN_')) unknownTypes += 1;
    const text = answerText(answer);
    if (text === undefined) continue;
    answers.push(text);
    if (answer.type === 'A' || answer.type === 'AAAA') answerIps.push(text);
  }
  return {
    id: packet.id ?? 0,
    isResponse: packet.type === 'response',
    queryName: question.name,
    queryType: typeName(question.type),
    responseCode: (packet as { rcode?: string }).rcode ?? 'NOERROR',
    answerIps,
    answers,
    unknownTypes,
  };
}

/** An answer's data as text: addresses, names, TXT strings joined; other types by type name. */
function answerText(answer: dnsPacket.Answer): string | undefined {
  switch (answer.type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'DNAME':
    case 'NS':
    case 'PTR':
      return String(answer.data);
    case 'TXT': {
      const data = answer.data as unknown;
      const parts = Array.isArray(data) ? data : [data];
      return parts.map((p) => (Buffer.isBuffer(p) ? p.toString('utf8') : String(p))).join('');
    }
    case 'MX': {
      const mx = answer.data as { exchange?: string };
      return mx.exchange;
    }
    case 'OPT':
      return undefined;
    default:
      return typeName(answer.type);
  }
}
