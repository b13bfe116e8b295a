import { seededRandom } from '../random.ts';
import { BASE32_RFC4648 } from './encoding.ts';
import { ipv4, ipv6Nibbles, randomHex, randomString, serviceName } from './benign-pick.ts';
import { expGap, paced, type TrafficStyle } from './query.ts';

/**
 * McAfee GTI file-reputation lookups (in the style of the public descriptions: the file's hash,
 * Base32-like, under `avqs.mcafee.com`, after a few version/flag labels): a scanning host asks one
 * per new file, all different, long and random. Lexically indistinguishable from exfiltration.
 */
export const mcafeeGti: TrafficStyle = {
  name: 'av-mcafee-gti',
  kind: 'benign',
  description:
    'McAfee GTI file reputation 0.0.0.0.1.0.0.4e.<26-char hash>.avqs.mcafee.com, one per scanned file',
  typicalQueries: 150,
  session(o) {
    const r = seededRandom(`mcafee:${o.seed}`);
    return paced(
      o,
      () => expGap(r, 4_000),
      () => ({
        name: `0.0.0.0.1.0.0.4e.${randomString(r, BASE32_RFC4648, 26)}.avqs.mcafee.com`,
        qtype: 'A',
        rcode: r.chance(0.9) ? 'NXDOMAIN' : 'NOERROR',
      }),
    );
  },
};

/**
 * Sophos Live Protection (SXL) lookups: a hex file hash split into labels, a lookup-type and a
 * version label under `sophosxl.net` (the shape public write-ups show); again one per file.
 */
export const sophosXl: TrafficStyle = {
  name: 'av-sophosxl',
  kind: 'benign',
  description:
    'Sophos Live Protection <hex hash in 2 labels>.<type>.<version>.sxl.sophosxl.net, one per file or URL',
  typicalQueries: 150,
  session(o) {
    const r = seededRandom(`sophos:${o.seed}`);
    return paced(
      o,
      () => expGap(r, 4_000),
      () => {
        const hash = randomHex(r, 40);
        const kind = r.pick(['f', 'f', 'u', 'i']);
        return { name: `${hash.slice(0, 20)}.${hash.slice(20)}.${kind}.3.sxl.sophosxl.net`, qtype: 'A' };
      },
    );
  },
};

/**
 * A mail server checking each connecting address against DNSBLs: `4.3.2.1.zen.spamhaus.org`
 * (reversed IPv4), for IPv6 senders the 32 reversed nibbles, and the domains in the mail against
 * the DBL (`<domain>.dbl.spamhaus.org`). The reversed IPv6 lookups are long and all different.
 */
export const dnsbl: TrafficStyle = {
  name: 'dnsbl-spamhaus',
  kind: 'benign',
  description:
    'mail server DNSBL checks d.c.b.a.zen.spamhaus.org, IPv6 nibbles (15 %), <domain>.dbl.spamhaus.org',
  typicalQueries: 300,
  session(o) {
    const r = seededRandom(`dnsbl:${o.seed}`);
    const prefixes = Array.from({ length: 20 }, () => randomHex(r, 16));
    return paced(
      o,
      () => expGap(r, 5_000),
      () => {
        const kind = r.next();
        const sub =
          kind < 0.75
            ? `${ipv4(r).reverse().join('.')}.zen`
            : kind < 0.9
              ? `${ipv6Nibbles(r, r.pick(prefixes)).reverse().join('.')}.zen`
              : `${serviceName(r, r.int(1, 2))}.${r.pick(['com', 'net', 'info', 'ru'])}.dbl`;
        return { name: `${sub}.spamhaus.org`, qtype: 'A', rcode: r.chance(0.9) ? 'NXDOMAIN' : 'NOERROR' };
      },
    );
  },
};

/** Reverse lookups of IPv4 addresses (a log server naming its clients): `d.c.b.10.in-addr.arpa`. */
export const ptrIpv4: TrafficStyle = {
  name: 'ptr-ipv4',
  kind: 'benign',
  description: 'reverse lookups d.c.b.10.in-addr.arpa of many client addresses (PTR)',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`ptr4:${o.seed}`);
    return paced(
      o,
      () => expGap(r, 3_000),
      () => ({ name: `${ipv4(r, 10).reverse().join('.')}.in-addr.arpa`, qtype: 'PTR' }),
    );
  },
};

/** Reverse lookups of IPv6 addresses in a few /64s: 32 reversed nibbles under `ip6.arpa`. */
export const ptrIpv6: TrafficStyle = {
  name: 'ptr-ipv6',
  kind: 'benign',
  description: 'reverse lookups of IPv6 addresses, 32 reversed nibbles under <n>.ip6.arpa (PTR)',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`ptr6:${o.seed}`);
    const site = `2${randomHex(r, 11)}`;
    const prefixes = Array.from({ length: 4 }, () => `${site}${randomHex(r, 4)}`);
    return paced(
      o,
      () => expGap(r, 3_000),
      () => ({ name: `${ipv6Nibbles(r, r.pick(prefixes)).reverse().join('.')}.ip6.arpa`, qtype: 'PTR' }),
    );
  },
};
