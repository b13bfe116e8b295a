import { seededRandom } from '../random.ts';
import { base64dns, capacity, hexInt, labels, randomBytes } from './encoding.ts';
import { expGap, paced, type TrafficStyle } from './query.ts';
import { tunnelDomain } from './tunnel-domains.ts';

/**
 * dns2tcp (TCP connections relayed through DNS), after its documentation: the client asks for TXT
 * records under the tunnel domain, the query carrying a small header (session id, sequence number,
 * packet type) and the TCP stream, Base64-encoded in labels; the server answers in TXT. A session
 * starts with an authentication and resource request (`ssh`), then relays data, and while idle
 * polls with header-only queries so the server can send.
 */
export const dns2tcp: TrafficStyle = {
  name: 'dns2tcp',
  kind: 'tunnel',
  description:
    'dns2tcp: Base64 header + TCP stream in labels of TXT queries; short header-only polls when idle',
  typicalQueries: 300,
  session(o) {
    const r = seededRandom(`dns2tcp:${o.seed}`);
    const domain = tunnelDomain(r);
    const session = r.int(0, 0xffff);
    let seq = r.int(0, 0xffff);
    const room = capacity(domain, 0, 6) - 6;
    const query = (data: Uint8Array) => {
      const header = new Uint8Array([session >> 8, session & 0xff, (seq >> 8) & 0xff, seq & 0xff, 0, 0]);
      seq = (seq + 1) & 0xffff;
      return labels(base64dns(new Uint8Array([...header, ...data])));
    };
    let burst = 0;
    return paced(
      o,
      () => (burst > 0 ? expGap(r, 30) : expGap(r, 500)),
      (i) => {
        let sub: string;
        if (i === 0) sub = `auth.${hexInt(session, 4)}`;
        else if (i === 1) sub = query(new TextEncoder().encode('ssh'));
        else if (burst > 0 || r.chance(0.15)) {
          burst = burst > 0 ? burst - 1 : r.int(3, 40);
          sub = query(randomBytes(r, r.int(Math.min(32, room), room)));
        } else sub = query(new Uint8Array());
        return { name: `${sub}.${domain}`, qtype: 'TXT' };
      },
    );
  },
};
