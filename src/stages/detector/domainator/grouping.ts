import { parse } from 'tldts';
import { isInternetName } from '../internet-name.ts';

/**
 * Zones whose subdomains are lookups keyed by an address or a hash, not names anybody could send
 * data through: reverse DNS (`in-addr.arpa`, `ip6.arpa`), DNS block lists (a mail server asks one
 * per connecting address or linked domain) and anti-virus/reputation services (one per scanned
 * file). Their names are long, random and all different, exactly like exfiltration, and a tunnel
 * needs the authoritative server of its domain, which nobody but these operators runs. The
 * evaluation (`scripts/eval-domainator.ts`) measured 97-100 % of such hosts alerted at 0.7 before
 * they were left out. Matched on the registrable domain (ICANN section of the Public Suffix List).
 */
export const LOOKUP_ZONES: ReadonlySet<string> = new Set([
  // DNS block and allow lists
  'spamhaus.org',
  'spamcop.net',
  'sorbs.net',
  'barracudacentral.org',
  'surbl.org',
  'uribl.com',
  'abuseat.org',
  'dnswl.org',
  'mailspike.net',
  'spameatingmonkey.net',
  'junkemailfilter.com',
  'senderscore.com',
  'senderbase.org',
  // anti-virus and reputation lookups
  'mcafee.com',
  'sophosxl.net',
  'e5.sk',
  'cymru.com',
]);

/**
 * Zones whose authoritative servers the provider runs and whose names carry its customers' or its
 * own ids (load balancers, caches, API gateways, front doors, tunnels, user content): nobody else
 * sees the queries, so no tunnel can sit there, and one host's lookups of several tenants' names
 * look exactly like random, all different subdomains of one domain. Matched on the registrable
 * domain (ICANN section) where the Public Suffix List's private section does not already make each
 * tenant a domain of its own.
 */
export const PROVIDER_ZONES: ReadonlySet<string> = new Set([
  'amazonaws.com',
  'cloudfront.net',
  'awsglobalaccelerator.com',
  'on.aws',
  'azurefd.net',
  'azureedge.net',
  'windows.net',
  'azure.com',
  'cfargotunnel.com',
  'googleusercontent.com',
  'googleapis.com',
  'appspot.com',
  'akamaiedge.net',
  'akamaihd.net',
  'fastly.net',
]);

/** The parts of a name the Domainator keeps a window for. */
export interface WindowDomain {
  /** The registrable domain, private suffixes included (`bucket.s3.amazonaws.com` is one). */
  readonly registrable: string;
  /** What lies below it (`chunk.0.t` of `chunk.0.t.example.com`). */
  readonly subdomain: string;
}

/**
 * The registrable domain and subdomain of a name, or undefined when the Domainator has nothing to
 * look at: no subdomain, a lookup or provider zone, a name that stays inside the network or lies
 * under one of its `searchDomains`, a name in an Active Directory forest's `_msdcs` zone, or a name
 * that is itself a public suffix. The forest's domain controllers answer `_msdcs` names
 * (`<DC GUID>._msdcs.<forest>`, `_ldap._tcp.dc._msdcs.<forest>`) for its own members: each DC's
 * GUID is a random id, and a busy address (a domain controller, many clients behind one NAT)
 * looking up several of them read as a tunnel under the forest's domain. The private part
 * of the Public Suffix List counts: under `s3.amazonaws.com`, `elb.amazonaws.com`,
 * `blob.core.windows.net` or `cloudfront.net` every tenant's name is a registrable domain of its
 * own (the provider runs their DNS, so no tunnel sits there), instead of one window per host
 * collecting the ids of every bucket and load balancer it uses.
 */
export function windowDomain(
  domainName: string,
  searchDomains: readonly string[] = [],
): WindowDomain | undefined {
  const name = domainName.trim().toLowerCase().replace(/\.+$/, '');
  if (name.endsWith('.arpa') || !isInternetName(name)) return undefined;
  if (searchDomains.some((d) => name === d || name.endsWith(`.${d}`))) return undefined;
  if (name.startsWith('_msdcs.') || name.includes('._msdcs.')) return undefined;
  const icann = parse(name).domain;
  if (icann !== null && (LOOKUP_ZONES.has(icann) || PROVIDER_ZONES.has(icann))) return undefined;
  const parsed = parse(name, { allowPrivateDomains: true });
  const registrable = parsed.domain;
  const subdomain = parsed.subdomain;
  if (registrable === null || subdomain === null || subdomain === '') return undefined;
  return { registrable, subdomain };
}
