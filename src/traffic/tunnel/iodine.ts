import { seededRandom } from '../random.ts';
import {
  BASE32_IODINE,
  BASE64_DNS,
  base32,
  capacity,
  encodeBits,
  hexInt,
  labels,
  randomBytes,
} from './encoding.ts';
import { expGap, paced, type QueryType, type TrafficStyle } from './query.ts';
import { tunnelDomain } from './tunnel-domains.ts';

/**
 * iodine (IPv4 over DNS), after its protocol description (doc/proto_00000502.txt): the client first
 * sends short handshake queries (`v` version, `l` login, `i` IP request, `z`/`y` codec checks, `r`
 * fragment-size probes with long random filler, `o` options), then data and pings under the
 * delegated zone (`t1.<domain>`). An upstream data query is one hex char (user id), three Base32
 * header chars, one cache-miss char and the IP packet encoded with the upstream codec (Base32
 * `a-z0-5`, or Base64/Base128 where the relay path allows them), filled up to the name length
 * limit. Pings (`p` + 6 Base32 chars) keep the lazy-mode server supplied with queries. IP packets
 * begin with nearly constant headers, so the payload is less random than encrypted data. Record
 * type: NULL (iodine's first choice), else TXT, CNAME or MX.
 */
export const iodine: TrafficStyle = {
  name: 'iodine',
  kind: 'tunnel',
  description:
    'iodine IPv4-over-DNS: handshake, then Base32/Base64 IP packets in ~200-char names and short p pings (NULL/TXT/CNAME/MX)',
  typicalQueries: 400,
  session(o) {
    const r = seededRandom(`iodine:${o.seed}`);
    const zone = `t1.${tunnelDomain(r)}`;
    const qtype = r.pick<QueryType>(['NULL', 'NULL', 'TXT', 'CNAME', 'MX']);
    const wide = r.chance(0.4);
    const user = r.int(0, 15);
    let cmc = r.int(0, 1000);
    const b32 = (n: number) => base32(randomBytes(r, n), BASE32_IODINE);
    const handshake = [
      () => `v${b32(6)}`,
      () => `l${b32(19)}`,
      () => `i${b32(2)}`,
      () => labels(`z${encodeBits(randomBytes(r, 90), BASE64_DNS)}`),
      () => `y${r.pick(['t', 's', 'u', 'v'])}${b32(3)}`,
      () => labels(`r${b32(2)}${b32(100)}`),
      () => `o${b32(3)}`,
    ];
    const data = () => {
      const fixed = 6;
      const room = capacity(zone, fixed, wide ? 6 : 5);
      const packet = ipPacket(r, r.int(Math.min(40, room), room));
      const header = `${hexInt(user, 1)}${b32(2).slice(0, 3)}${(cmc++ % 36).toString(36)}`;
      const body = wide ? encodeBits(packet, BASE64_DNS) : base32(packet, BASE32_IODINE);
      return labels(`${header}${body}`);
    };
    return paced(
      o,
      () => expGap(r, 40),
      (i) => {
        const step = handshake[i];
        const sub = step ? step() : r.chance(0.3) ? `p${b32(4)}` : data();
        return { name: `${sub}.${zone}`, qtype };
      },
    );
  },
};

/** An IPv4/TCP packet: mostly constant headers, then `n - 40` bytes of (compressed or encrypted) payload. */
function ipPacket(r: ReturnType<typeof seededRandom>, n: number): Uint8Array {
  const out = randomBytes(r, n);
  const header = [0x45, 0x00, 0x00, n & 0xff, r.int(0, 255), r.int(0, 255), 0x40, 0x00, 0x40, 0x06];
  const fixed = [...header, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1, 0xc3, 0x50, 0x01, 0xbb];
  fixed.forEach((b, i) => {
    if (i < n) out[i] = b;
  });
  return out;
}
