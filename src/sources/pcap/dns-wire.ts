import dnsPacket from 'dns-packet';

/**
 * A DNS wire-format message (RFC 1035) from a captured packet, parsed with `dns-packet` and reduced
 * to what an observation needs. A message that does not parse is a reason, never a throw; a type
 * the library does not know is kept as `TYPE<n>`.
 */
export interface WireDns {
  readonly id: number;
  readonly isResponse: boolean;
  readonly queryName: string;
  readonly queryType: string;
  readonly responseCode: string;
  readonly answerIps: string[];
  readonly answers: string[];
}

const typeName = (type: string): string => (type.startsWith('UNKNOWN_') ? `TYPE${type.slice(8)}` : type);

export function parseWireDns(bytes: Buffer): WireDns | string {
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(bytes);
  } catch (e) {
    return `DNS message of ${bytes.length} bytes does not parse: ${e instanceof Error ? e.message : String(e)}`;
  }
  const question = packet.questions?.[0];
  if (question === undefined) return 'DNS message without a question';
  const answerIps: string[] = [];
  const answers: string[] = [];
  for (const answer of packet.answers ?? []) {
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
  };
}

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
    case 'MX':
      return (answer.data as { exchange?: string }).exchange;
    case 'OPT':
      return undefined;
    default:
      return typeName(answer.type);
  }
}
