import { benignHostname, popularDomains } from './benign-domains.ts';
import { dgaFamily } from './dga-families.ts';
import { DEFAULT_FAMILIES, planHosts, type HostTruth } from './hosts.ts';
import { fnv1a, seededRandom, zipfSampler, type Random } from './random.ts';

/** Options of {@link generateTraffic}. */
export interface TrafficOptions {
  readonly seed: number;
  /** Lines per second on average (all hosts together). */
  readonly rate: number;
  /** Seconds of traffic. */
  readonly durationSeconds: number;
  /** Hosts in total. */
  readonly hosts: number;
  /** Timestamp of the first second (ms since the epoch). */
  readonly startMs: number;
  /** DGA families of the infected hosts; default conficker, necurs, suppobox, bamital. */
  readonly families?: readonly string[];
  /** One host tunnelling through DNS; default true. */
  readonly tunnel?: boolean;
  /** Hosts per /24 subnet; default 16. */
  readonly hostsPerSubnet?: number;
  /**
   * Line format: `heidgaf` (`ts` with microseconds and `Z`, sizes like `331b`) or `v2` (Python
   * v2.0.0: `ts` to the second, sizes like `331`, no `response_ip`). Default `heidgaf`; the shipped
   * collector config accepts both.
   */
  readonly format?: 'heidgaf' | 'v2';
  /** Share of benign lookups answered NXDOMAIN (typos, stale names); default 0.03. */
  readonly nxdomainShare?: number;
  /**
   * The names benign hosts look up, most popular first (Zipf-distributed); default the popular
   * mail and web domains with web, mail and CDN host labels. Given names are looked up as they are.
   */
  readonly benignNames?: readonly string[];
  /**
   * Chromium's intranet-redirect probes per benign host and hour; default 0. Each is three random
   * single-label names of 7-15 letters, looked up bare and, on hosts with a search suffix, with it
   * appended, all NXDOMAIN: the browser sends them at start and on every network change, and they
   * are the commonest random-looking names a benign host resolves.
   */
  readonly browserProbes?: number;
}

/** One generated log line and when it happens. */
export interface GeneratedLine {
  /** Event time (ms since the epoch); lines come out in this order. */
  readonly atMs: number;
  readonly srcIp: string;
  /** The line as the sensor writes it: one JSON object in the collector's format. */
  readonly line: string;
}

export interface Traffic {
  /** Every host and what it really is. */
  readonly truth: readonly HostTruth[];
  /** The lines, in time order; each call starts over and yields the same lines. */
  lines(): Generator<GeneratedLine>;
}

/** Share of benign lookups answered NXDOMAIN when `nxdomainShare` is not given. */
export const DEFAULT_NXDOMAIN_SHARE = 0.03;

const DNS_SERVERS = ['192.168.2.53', '192.168.2.54'];
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Seeded DNS traffic: benign hosts browse popular domains (Zipf-distributed, with web, mail and CDN
 * host names and a normal share of NXDOMAIN), infected hosts also query their family's DGA names in
 * bursts (mostly NXDOMAIN), and one host tunnels data in long random subdomains of one domain. The
 * same options always give the same lines and the same truth.
 */
export function generateTraffic(o: TrafficOptions): Traffic {
  if (!(o.rate > 0) || !(o.durationSeconds > 0)) throw new RangeError('rate and duration must be positive');
  const root = seededRandom(o.seed);
  const truth = planHosts(root.fork('hosts'), {
    hosts: o.hosts,
    families: o.families ?? DEFAULT_FAMILIES,
    tunnel: o.tunnel ?? true,
    hostsPerSubnet: o.hostsPerSubnet ?? 16,
  });
  const popular = o.benignNames ?? popularDomains();
  const asIs = o.benignNames !== undefined;
  const zipf = zipfSampler(popular.length);
  const nxShare = o.nxdomainShare ?? DEFAULT_NXDOMAIN_SHARE;
  const format = o.format ?? 'heidgaf';
  const perHostRate = o.rate / o.hosts;

  function* lines(): Generator<GeneratedLine> {
    const hostRandom = truth.map((h) => root.fork(`host:${h.ip}`));
    const probeRandom = truth.map((h) =>
      (o.browserProbes ?? 0) > 0 ? root.fork(`probes:${h.ip}`) : undefined,
    );
    const dgaIndex = truth.map(() => 0);
    const nextBurst = truth.map((_, i) => (hostRandom[i] as Random).int(2, 20));
    let tunnelSeq = 0;
    for (let second = 0; second < o.durationSeconds; second += 1) {
      const t0 = o.startMs + second * 1000;
      const events: { at: number; ip: string; fields: Record<string, string> }[] = [];
      truth.forEach((host, i) => {
        const r = hostRandom[i] as Random;
        for (let k = poisson(r, perHostRate); k > 0; k -= 1)
          events.push({
            at: t0 + r.int(0, 999),
            ip: host.ip,
            fields: benignLookup(r, popular, zipf, nxShare, asIs),
          });
        const p = probeRandom[i];
        if (p && host.role === 'benign' && p.chance((o.browserProbes ?? 0) / 3600))
          for (const domain of browserProbe(p, fnv1a(host.ip) % 2 === 0))
            events.push({ at: t0 + p.int(0, 999), ip: host.ip, fields: lookup(p, domain, true) });
        if (host.role === 'dga' && second >= (nextBurst[i] ?? 0)) {
          const family = dgaFamily(host.family);
          const day = Math.floor(t0 / 86_400_000);
          for (let k = r.int(15, 40); k > 0; k -= 1) {
            const index = dgaIndex[i] ?? 0;
            dgaIndex[i] = index + 1;
            const domain = family.domain(host.malwareSeed, day, index);
            // A burst fits in its second, so the lines of each second can be sorted on their own.
            events.push({ at: t0 + r.int(0, 999), ip: host.ip, fields: lookup(r, domain, r.chance(0.95)) });
          }
          nextBurst[i] = second + r.int(20, 60);
        }
        if (host.role === 'tunnel') {
          for (let k = r.int(1, 3); k > 0; k -= 1) {
            let chunk = '';
            for (let c = r.int(40, 60); c > 0; c -= 1) chunk += BASE32[r.int(0, 31)];
            const domain = `${chunk}.${(tunnelSeq++).toString(36)}.t.${host.domain}`;
            events.push({ at: t0 + r.int(0, 999), ip: host.ip, fields: lookup(r, domain, false) });
          }
        }
      });
      events.sort((a, b) => a.at - b.at || (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
      for (const e of events) {
        const r = hostRandom[0] as Random;
        const line = {
          ts: formatTs(e.at, format),
          status_code: e.fields.status_code,
          src_ip: e.ip,
          dns_server_ip: DNS_SERVERS[fnv1a(e.ip) % DNS_SERVERS.length],
          domain_name: e.fields.domain_name,
          record_type: e.fields.record_type,
          // v2.0.0's lines carry no response_ip.
          ...(format === 'heidgaf' ? { response_ip: e.fields.response_ip } : {}),
          size: format === 'heidgaf' ? `${r.int(60, 400)}b` : `${r.int(60, 400)}`,
        };
        yield { atMs: e.at, srcIp: e.ip, line: JSON.stringify(line) };
      }
    }
  }
  return { truth, lines };
}

function poisson(r: Random, mean: number): number {
  // Knuth's method; the per-host means here are small.
  const limit = Math.exp(-mean);
  let k = 0;
  let p = r.next();
  while (p > limit) {
    k += 1;
    p *= r.next();
  }
  return k;
}

/**
 * Benign NXDOMAIN answers come mostly from names the network makes up itself: the resolver's
 * search suffix appended to a name (`www.facebook.com.corp.example.com`), probes for internal
 * services (`wpad.`, `isatap.`) and stale hosts; mistyped names are a small part.
 */
function benignLookup(
  r: Random,
  popular: readonly string[],
  zipf: (r: Random) => number,
  nxShare: number,
  asIs: boolean,
): Record<string, string> {
  const domain = popular[zipf(r)] ?? 'example.com';
  // Drawn where it is used, so the default traffic's random sequence stays what it was.
  const host = (): string => (asIs ? domain : benignHostname(r, domain));
  if (!r.chance(nxShare)) return lookup(r, host(), false);
  const kind = r.next();
  if (kind < 0.45) return lookup(r, `${host()}.${SEARCH_SUFFIX}`, true);
  if (kind < 0.9)
    return lookup(r, `${r.pick(INTERNAL_NAMES)}.${r.chance(0.5) ? SEARCH_SUFFIX : domain}`, true);
  return lookup(r, typo(r, domain), true);
}

const SEARCH_SUFFIX = 'corp.example.com';

/** Three probe names (`[a-z]{7,15}`), bare and, when the host has one, under the search suffix. */
function browserProbe(r: Random, withSuffix: boolean): string[] {
  const names: string[] = [];
  for (let k = 0; k < 3; k += 1) {
    let label = '';
    for (let c = r.int(7, 15); c > 0; c -= 1) label += 'abcdefghijklmnopqrstuvwxyz'[r.int(0, 25)];
    if (withSuffix) names.push(`${label}.${SEARCH_SUFFIX}`);
    names.push(label);
  }
  return names;
}
const INTERNAL_NAMES = ['wpad', 'isatap', 'printer', 'fileserver', 'intranet', 'vpn', 'old', 'backup'];

/** One letter of the name's first label replaced: the classic mistyped lookup. */
function typo(r: Random, domain: string): string {
  const dot = domain.indexOf('.');
  const at = r.int(0, Math.max(0, dot - 1));
  const letter = 'abcdefghijklmnopqrstuvwxyz'[r.int(0, 25)] as string;
  return domain.slice(0, at) + letter + domain.slice(at + 1);
}

function lookup(r: Random, domain: string, nxdomain: boolean): Record<string, string> {
  const aaaa = r.chance(0.3);
  const h = fnv1a(domain);
  const response = nxdomain
    ? aaaa
      ? '::'
      : '0.0.0.0'
    : aaaa
      ? `2001:db8:${(h >>> 16).toString(16)}::${(h & 0xffff).toString(16)}`
      : `${100 + (h % 100)}.${(h >>> 8) % 256}.${(h >>> 16) % 256}.${1 + ((h >>> 24) % 254)}`;
  return {
    domain_name: domain,
    status_code: nxdomain ? 'NXDOMAIN' : 'NOERROR',
    record_type: aaaa ? 'AAAA' : 'A',
    response_ip: response,
  };
}

/** `%Y-%m-%dT%H:%M:%S.%fZ` (microseconds) or `%Y-%m-%dT%H:%M:%S`, in UTC. */
export function formatTs(ms: number, format: 'heidgaf' | 'v2'): string {
  const iso = new Date(ms).toISOString();
  return format === 'heidgaf' ? `${iso.slice(0, 23)}000Z` : iso.slice(0, 19);
}
