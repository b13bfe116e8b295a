import dnsPacket from 'dns-packet';
import { encodeDnstap, type DnstapFrame } from '../../src/sources/dnstap/dnstap-schema.ts';

/** Synthetic dnstap traffic for tests and the benchmark: DNS messages built with dns-packet. */

export const v4 = (text: string): Uint8Array => Uint8Array.from(text.split('.').map(Number));

export function query(id: number, name: string, type: dnsPacket.RecordType = 'A'): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name }],
  });
}

export function response(
  id: number,
  name: string,
  o: { type?: dnsPacket.RecordType; rcode?: string; answers?: dnsPacket.Answer[] } = {},
): Buffer {
  const rcode = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 }[o.rcode ?? 'NOERROR'] ?? 0;
  return dnsPacket.encode({
    type: 'response',
    id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
    questions: [{ type: o.type ?? 'A', name }],
    answers: o.answers ?? [],
  });
}

export const T0 = Date.UTC(2026, 11, 1, 9, 5, 7) * 1000 + 123_456;

/** A CLIENT_QUERY / CLIENT_RESPONSE pair for one client, as Unbound sends them. */
export function clientPair(
  client: string,
  port: number,
  id: number,
  name: string,
  o: Parameters<typeof response>[2] = {},
): { query: Uint8Array; response: Uint8Array; queryBytes: Buffer; responseBytes: Buffer } {
  const base: Omit<DnstapFrame, 'type'> = {
    identity: 'resolver-1',
    transport: 'udp',
    queryAddress: v4(client),
    responseAddress: v4('127.0.0.1'),
    queryPort: port,
    responsePort: 53,
  };
  const queryBytes = query(id, name, o.type);
  const responseBytes = response(id, name, o);
  return {
    queryBytes,
    responseBytes,
    query: encodeDnstap({ ...base, type: 'CLIENT_QUERY', queryTimeMicros: T0, queryMessage: queryBytes }),
    response: encodeDnstap({
      ...base,
      type: 'CLIENT_RESPONSE',
      queryTimeMicros: T0,
      responseTimeMicros: T0 + 1500,
      responseMessage: responseBytes,
    }),
  };
}
