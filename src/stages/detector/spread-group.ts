import type { WarningWindowSettings } from '../../config/index.ts';
import { parse } from 'tldts';
import { splitName } from './dga-features/name-split.ts';
import { LOOKUP_ZONES } from './domainator/grouping.ts';
import { isInternetName } from './internet-name.ts';
import type { WindowSettings } from './warning-window.ts';

/** Four or more all-digit labels in a row: an IPv4 address written into the name. */
const IPV4_LABELS = /(^|\.)\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(\.|$)/;
/** Eight or more one-hex-digit labels in a row: IPv6 nibbles written into the name. */
const IPV6_NIBBLES = /(^|\.)([0-9a-f]\.){7}[0-9a-f](\.|$)/;

/**
 * The domain the spread rule counts a name under: its registrable domain (the Public Suffix List's
 * private section included, as the model splits names), when the name has labels left of it.
 * Undefined, so the name never counts, for:
 * - a bare registrable name, or one that stays inside the network (`isInternetName`): no random
 *   label under a fixed domain;
 * - `arpa` names: reverse lookups of addresses without a PTR record fail by the thousand, and the
 *   resolver answers the private ranges' reverse zones itself (NXDOMAIN by design);
 * - names with an IPv4 address or IPv6 nibbles in their labels: blocklist (DNSBL) queries, which
 *   a mail server sends for every connecting address and which fail for every address not listed;
 * - names in the lookup zones the Domainator leaves alone (block lists, reputation services), whose
 *   names carry a hash or a domain and fail whenever it is not listed;
 * - names under an exempt domain (the network's search domains, other lookup services).
 */
export function spreadGroupOf(exemptDomains: readonly string[]): (name: string) => string | undefined {
  const exempt = exemptDomains.map((d) => d.toLowerCase().replace(/\.+$/, ''));
  return (name) => {
    if (!isInternetName(name)) return undefined;
    const split = splitName(name);
    if (split.subdomains.length === 0 || split.suffix === '') return undefined;
    if (split.suffix === 'arpa' || split.suffix.endsWith('.arpa')) return undefined;
    const labels = split.subdomains.join('.');
    if (IPV4_LABELS.test(labels) || IPV6_NIBBLES.test(labels)) return undefined;
    if (exempt.some((d) => split.name === d || split.name.endsWith(`.${d}`))) return undefined;
    const icann = parse(split.name).domain;
    if (icann !== null && LOOKUP_ZONES.has(icann)) return undefined;
    return `${split.registrable}.${split.suffix}`;
  };
}

/** Whether a warning's line (the window's payload in the stage) was answered NXDOMAIN. */
function failed(line: unknown): boolean {
  return (
    typeof line === 'object' &&
    line !== null &&
    (line as { status_code?: unknown }).status_code === 'NXDOMAIN'
  );
}

/**
 * A detector entry's window settings as the window logic takes them, at the entry's `threshold`.
 * The spread rule counts failed lookups only: the names of a family under a fixed domain mostly do
 * not exist, while a host resolves many existing names under one domain by design (a video CDN's
 * shards, a cloud provider's services) whenever the prefilter passes them.
 */
export function windowRules(settings: WarningWindowSettings, threshold: number): WindowSettings {
  const { spread, ...rest } = settings;
  const group = spreadGroupOf(spread?.exemptDomains ?? []);
  return {
    ...rest,
    threshold,
    ...(spread && {
      spread: {
        threshold: spread.threshold,
        minWarnings: spread.minWarnings,
        groupOf: (name: string, line: unknown) => (failed(line) ? group(name) : undefined),
      },
    }),
  };
}
