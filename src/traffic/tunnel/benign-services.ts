import { seededRandom } from '../random.ts';
import { serviceName, workingSet } from './benign-pick.ts';
import { expGap, paced, type TrafficStyle } from './query.ts';

/** NTP pool servers: `0.pool.ntp.org`, `2.debian.pool.ntp.org`, `1.android.pool.ntp.org`. */
export const ntpPool: TrafficStyle = {
  name: 'ntp-pool',
  kind: 'benign',
  description: 'NTP pool [0-3].[vendor.]pool.ntp.org, every few minutes',
  typicalQueries: 60,
  session(o) {
    const r = seededRandom(`ntp:${o.seed}`);
    const vendor = r.pick(['', 'debian.', 'ubuntu.', 'android.', 'centos.', 'europe.', 'north-america.']);
    return paced(
      o,
      () => expGap(r, 120_000),
      () => ({ name: `${r.int(0, 3)}.${vendor}pool.ntp.org`, qtype: r.chance(0.5) ? 'AAAA' : 'A' }),
    );
  },
};

/**
 * Unicast DNS service discovery (RFC 6763) in the site's domain: browse domains
 * (`b._dns-sd._udp.<domain>`), service types (`_ipp._tcp`) and instances
 * (`<printer-name>._ipp._tcp`). Underscore labels: outside the collector's host-name pattern, so in
 * the shipped pipeline these never reach the Domainator; scored here for completeness.
 */
export const dnsSd: TrafficStyle = {
  name: 'dns-sd',
  kind: 'benign',
  description: 'DNS-SD browsing b|lb|db._dns-sd._udp.<domain>, _ipp._tcp, <instance>._ipp._tcp (PTR/SRV/TXT)',
  typicalQueries: 80,
  session(o) {
    const r = seededRandom(`dns-sd:${o.seed}`);
    const domain = `${serviceName(r, 1)}-corp.com`;
    const next = workingSet(r, r.int(5, 20), () => {
      const service = r.pick(['_ipp._tcp', '_printer._tcp', '_airplay._tcp', '_smb._tcp', '_http._tcp']);
      const kind = r.next();
      if (kind < 0.3) return `${r.pick(['b', 'lb', 'db', 'r', 'dr'])}._dns-sd._udp`;
      if (kind < 0.6) return service;
      return `${serviceName(r, 2)}-${r.int(1, 40)}.${service}`;
    });
    return paced(
      o,
      () => expGap(r, 30_000),
      () => ({ name: `${next()}.${domain}`, qtype: r.pick(['PTR', 'SRV', 'TXT'] as const) }),
    );
  },
};
