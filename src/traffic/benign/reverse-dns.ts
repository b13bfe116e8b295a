import type { Random } from '../random.ts';
import { HEX, chars, ipv4 } from './labels.ts';
import { patternSource } from './source.ts';

/** US state codes as Comcast puts them in `c-<ip>.hsd1.<state>.comcast.net`. */
const STATES = [
  'ca',
  'wa',
  'or',
  'co',
  'il',
  'mi',
  'pa',
  'nj',
  'ma',
  'fl',
  'ga',
  'tx',
  'md',
  'va',
  'mn',
  'in',
  'tn',
  'ut',
];
/** Verizon FiOS and Spectrum (rr.com) metro codes as they appear in their PTR names. */
const FIOS = [
  'washdc',
  'nycmny',
  'bstnma',
  'phlapa',
  'tampfl',
  'dllstx',
  'lsanca',
  'pitbpa',
  'ptldor',
  'rcmdva',
];
const RR = [
  'socal',
  'nyc',
  'tx',
  'carolina',
  'twcny',
  'kc',
  'neo',
  'columbus',
  'woh',
  'wi',
  'hawaii',
  'austin',
];
/** ISPs whose generic PTR names put the address in dashes before a static/dynamic/pool zone. */
const GENERIC_ISPS = [
  'static.kpn.net',
  'dynamic.kabel-deutschland.de',
  'dyn.telefonica.de',
  'pool.telefonica.de',
  'static.vodafone.pt',
  'dynamic.isp.telekom.rs',
  'cust.bredband2.com',
  'customer.tdc.net',
  'dsl.telesp.net.br',
  'static.ctinets.com',
  'ip.fastwebnet.it',
  'rev.sfr.net',
  'business.telecomitalia.it',
  'dynamic.163data.com.cn',
  'static.tpgi.com.au',
  'dyn.plus.net',
  'cable.virginm.net',
  'bb.sky.com',
  'res.spectrum.com',
  'static.unitymediagroup.de',
  'ip.btc-net.bg',
  'dynamic.vodafone.cz',
  'broadband.kyivstar.net',
  'static.hinet.net',
  'dynamic.hinet.net',
  'ppp.asahi-net.or.jp',
  'bb.netvision.net.il',
  'static.airtelbroadband.in',
  'cpe.netcabo.pt',
  'adsl.tpnet.pl',
];
const ARPA_PREFIX = [
  24, 31, 37, 46, 50, 62, 66, 71, 73, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,
];

const SCHEMES: ((r: Random) => string)[] = [
  // Comcast residential: `c-<a>-<b>-<c>-<d>.hsd1.<state>.comcast.net`.
  (r) => `c-${ipv4(r, [24, 50, 67, 69, 71, 73, 76, 98, 107]).join('-')}.hsd1.${r.pick(STATES)}.comcast.net`,
  // Verizon FiOS: `pool-<ip>.<metro>.fios.verizon.net`; Spectrum: `cpe-<ip>.<region>.res.rr.com`.
  (r) => `pool-${ipv4(r, [71, 72, 96, 98, 100, 108, 173]).join('-')}.${r.pick(FIOS)}.fios.verizon.net`,
  (r) =>
    `cpe-${ipv4(r, [24, 66, 67, 70, 72, 74, 75, 76, 97, 98, 104, 174]).join('-')}.${r.pick(RR)}.res.rr.com`,
  // AT&T: `<ip>.lightspeed.<metro>.sbcglobal.net`.
  (r) =>
    `${ipv4(r, [99, 104, 107, 108]).join('-')}.lightspeed.${r.pick(['sntcca', 'hstntx', 'dllstx', 'irvnca', 'chcgil', 'miamfl', 'austtx'])}.sbcglobal.net`,
  // Deutsche Telekom: `p<8 hex>.dip0.t-ipconnect.de` (the address in hex).
  (r) => `p${chars(r, HEX, 8)}.dip0.t-ipconnect.de`,
  // Generic: `<ip>.static.<isp>`, `host-<ip>.<zone>`, `ip<ip>.<zone>`, `<ip>-<zone>` styles.
  (r) => `${ipv4(r).join('-')}.${r.pick(GENERIC_ISPS)}`,
  (r) => `host-${ipv4(r).join('-')}.${r.pick(GENERIC_ISPS)}`,
  (r) => `${r.pick(['ip', 'dsl', 'adsl', 'cm', 'dhcp', 'ppp'])}${ipv4(r).join('-')}.${r.pick(GENERIC_ISPS)}`,
  // BT: `host<a>-<b>-<c>-<d>.range<a>-<b>.btcentralplus.com`.
  (r) => {
    const [a, b, c, d] = ipv4(r, [31, 81, 86, 109]);
    return `host${a}-${b}-${c}-${d}.range${a}-${b}.btcentralplus.com`;
  },
  // Orange France: `lfbn-<city>-1-<n>-<n>.w<a>-<b>.abo.wanadoo.fr`.
  (r) =>
    `lfbn-${r.pick(['lyo', 'idf1', 'idf2', 'mar', 'tou', 'nan', 'lil', 'bor', 'ren', 'str'])}-1-${r.int(1, 1999)}-${r.int(1, 254)}.w${r.int(80, 92)}-${r.int(1, 254)}.abo.wanadoo.fr`,
  // Reverse lookups themselves: `<d>.<c>.<b>.<a>.in-addr.arpa` and IPv6 nibbles under ip6.arpa.
  (r) => `${ipv4(r, ARPA_PREFIX).reverse().join('.')}.in-addr.arpa`,
  // (32 nibbles: 24 drawn, then a real ISP /32 reversed: 2a02:8108 Vodafone DE, 2600:1700 AT&T, 2003:e4 Telekom, 2a01:cb00 Orange.)
  (r) =>
    `${chars(r, HEX, 24).split('').join('.')}.${r.pick(['8.0.1.8.2.0.a.2', '0.0.7.1.0.0.6.2', '4.e.0.0.3.0.0.2', '0.0.b.c.1.0.a.2'])}.ip6.arpa`,
  // Hosting providers: `static.<d>.<c>.<b>.<a>.clients.your-server.de`, `ip-<ip>.eu` (OVH), `li<n>-<n>.members.linode.com`.
  (r) =>
    `static.${ipv4(r, [5, 46, 78, 88, 95, 116, 135, 136, 138, 144, 148, 159, 162, 167, 168, 176]).reverse().join('.')}.clients.your-server.de`,
  (r) =>
    `ip${r.int(1, 255)}.ip-${ipv4(r, [51, 54, 137, 141, 145, 146, 147, 149, 151, 158, 164, 176, 178, 188, 213]).slice(0, 3).join('-')}.${r.pick(['eu', 'net', 'us'])}`,
  (r) => `li${r.int(100, 2200)}-${r.int(1, 254)}.members.linode.com`,
];

export const reverseDns = patternSource(
  'reverse-dns',
  'PTR and reverse-lookup names of ISPs and hosters with the address in the name: Comcast ' +
    'c-<ip>.hsd1.<state>.comcast.net, Verizon pool-<ip>.<metro>.fios.verizon.net, Spectrum cpe-<ip>, AT&T ' +
    'lightspeed, Telekom p<hex>.dip0.t-ipconnect.de, BT, Orange, generic <ip>.static.<isp> forms of real ISP ' +
    'zones, Hetzner, OVH, Linode, and <d>.<c>.<b>.<a>.in-addr.arpa / ip6.arpa nibble names',
  (r) => r.pick(SCHEMES)(r),
);
