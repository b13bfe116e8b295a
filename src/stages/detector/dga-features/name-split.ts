import { parse } from 'tldts';

/**
 * Who picks the label left of a name's public suffix. In a registered domain (`example.com`) and
 * under the parents where customers choose their own name (dynamic DNS, free hosting:
 * `myhome.ddns.net`, `alice.github.io`), a person or a malware author does; under some cloud
 * parents the provider assigns an id (`d1a2b3c4e5f6g7.cloudfront.net`), where randomness is normal.
 */
export const SUFFIX_KIND = { registered: 0, customerNamed: 1, providerAssigned: 2 } as const;
export type SuffixKind = (typeof SUFFIX_KIND)[keyof typeof SUFFIX_KIND];

/**
 * Dynamic-DNS parents that the Public Suffix List's private section does not hold (it holds
 * ddns.net, duckdns.org, no-ip's and dyndns' names): a label under them is a customer's name too.
 */
const EXTRA_CUSTOMER_PARENTS = new Set([
  'yi.org',
  '3322.org',
  'mooo.com',
  'dynserv.com',
  'afraid.org',
  'changeip.com',
  'dns.navy',
  'dynu.net',
  'dynu.com',
  'ngrok.io',
  'ngrok-free.app',
  'trycloudflare.com',
]);

/**
 * Private suffixes whose labels the provider assigns (documented naming schemes: CloudFront
 * distributions, ELB and EC2 host names, Akamai edge hosts, the ids MyFRITZ gives its routers). Matched as the suffix itself or its
 * last labels, so regional variants (`us-east-1.elb.amazonaws.com`) match too.
 */
const PROVIDER_ASSIGNED = [
  'cloudfront.net',
  'myfritz.net',
  'elb.amazonaws.com',
  'compute.amazonaws.com',
  'compute-1.amazonaws.com',
  'akamaiedge.net',
  'akamaihd.net',
  'edgekey.net',
  'azureedge.net',
  'trafficmanager.net',
];

/** The parts of a name the DGA features look at. */
export interface NameSplit {
  /** The whole name, lower case, without a trailing dot. */
  readonly name: string;
  /** The label left of the public suffix (private section included): the registrable label. */
  readonly registrable: string;
  /** Labels left of the registrable label, leftmost first. */
  readonly subdomains: readonly string[];
  readonly suffix: string;
  readonly suffixKind: SuffixKind;
}

function providerAssigned(suffix: string): boolean {
  return PROVIDER_ASSIGNED.some((p) => suffix === p || suffix.endsWith(`.${p}`));
}

/**
 * Splits a name with the Public Suffix List including its private section, so the label a
 * dynamic-DNS customer (or a malware author) chose is scored as the registrable label:
 * `x1f9q.ddns.net` has registrable label `x1f9q`. A name that is itself a suffix (a wildcard
 * entry such as `ec2-1-2-3-4.compute-1.amazonaws.com`) has its first label as registrable label.
 */
export function splitName(domain: string): NameSplit {
  const name = domain.trim().toLowerCase().replace(/\.+$/, '');
  const parsed = parse(name, { allowPrivateDomains: true });
  let suffix = parsed.publicSuffix ?? '';
  let labels = name.split('.');
  let kind: SuffixKind = parsed.isPrivate === true ? SUFFIX_KIND.customerNamed : SUFFIX_KIND.registered;
  if (parsed.domain !== null && EXTRA_CUSTOMER_PARENTS.has(parsed.domain) && parsed.subdomain) {
    suffix = parsed.domain;
    kind = SUFFIX_KIND.customerNamed;
  }
  if (suffix !== '' && name !== suffix) labels = name.slice(0, name.length - suffix.length - 1).split('.');
  else if (labels.length > 1) {
    // The whole name is a suffix: its first label is what the provider (or someone) put there.
    suffix = labels.slice(1).join('.');
    labels = labels.slice(0, 1);
  }
  if (kind === SUFFIX_KIND.customerNamed && providerAssigned(suffix)) kind = SUFFIX_KIND.providerAssigned;
  return {
    name,
    registrable: labels[labels.length - 1] ?? '',
    subdomains: labels.slice(0, -1),
    suffix,
    suffixKind: kind,
  };
}
