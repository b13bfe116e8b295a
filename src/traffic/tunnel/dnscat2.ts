import { seededRandom } from '../random.ts';
import { capacity, hex, hexInt, labels, randomBytes, textBytes } from './encoding.ts';
import { expGap, paced, type QueryType, type TrafficStyle } from './query.ts';
import { tunnelDomain } from './tunnel-domains.ts';

/**
 * dnscat2 (a command-and-control shell over DNS), after its protocol document (doc/protocol.md):
 * every message is hex-encoded into the name (`<hex>.<domain>`, dots anywhere, ignored by the
 * server), record types TXT, CNAME and MX chosen per query. A message is a 16-bit packet id (new per
 * packet, against caching), the type (SYN 00, MSG 01, FIN 02), the 16-bit session id and, in MSG,
 * 16-bit SEQ and ACK, then the data. The client polls all the time, so most queries of an
 * interactive session are empty MSGs of 18 hex characters that differ only in the packet id and the
 * sequence numbers; commands and their output make the long ones (plain-text shell output here,
 * since encryption adds only a few header bytes and keeps the shape).
 */
export const dnscat2: TrafficStyle = {
  name: 'dnscat2',
  kind: 'tunnel',
  description:
    'dnscat2 shell: hex packets (packet id, type, session id, seq/ack, data) split into labels; mostly 18-char polls (TXT/CNAME/MX)',
  typicalQueries: 300,
  session(o) {
    const r = seededRandom(`dnscat2:${o.seed}`);
    const domain = tunnelDomain(r);
    const session = r.int(0, 0xffff);
    let packetId = r.int(0, 0xffff);
    let seq = r.int(0, 0xffff);
    const ack = r.int(0, 0xffff);
    const labelSize = r.pick([30, 63]);
    const room = capacity(domain, 0, 4) - 9;
    const message = (type: number, data: Uint8Array) => {
      const head = `${hexInt(packetId++, 4)}${hexInt(type, 2)}${hexInt(session, 4)}`;
      const body = type === 1 ? `${hexInt(seq, 4)}${hexInt(ack, 4)}${hex(data)}` : hex(data);
      seq = (seq + data.length) & 0xffff;
      return labels(head + body, labelSize);
    };
    let burst = 0;
    return paced(
      o,
      () => (burst > 0 ? expGap(r, 50) : expGap(r, 1000)),
      (i) => {
        let sub: string;
        if (i === 0) sub = message(0, new Uint8Array([0, 0, 0, 0x21, ...textBytes(r, 12), 0]));
        else if (burst > 0) {
          burst -= 1;
          sub = message(1, r.chance(0.5) ? textBytes(r, room) : randomBytes(r, r.int(8, room)));
        } else {
          if (r.chance(0.08)) burst = r.int(2, 20);
          sub = message(1, new Uint8Array());
        }
        return { name: `${sub}.${domain}`, qtype: r.pick<QueryType>(['TXT', 'CNAME', 'MX']) };
      },
    );
  },
};
