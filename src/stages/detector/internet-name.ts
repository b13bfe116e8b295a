/**
 * Top-level labels no registry delegates: special-use names (RFC 6761 `test`, `invalid`, `localhost`,
 * `example`; RFC 6762 `local`; RFC 8375 `home.arpa` is under `arpa`, below), the name ICANN reserved
 * for private use (`internal`, 2024) and the ones its name-collision work found most queried in
 * private networks and never delegated (`home`, `corp`, `mail`, `lan`, `localdomain`, `intranet`,
 * `private`). A name under them cannot be registered, so no malware can reach its server through it.
 */
const PRIVATE_TLDS = new Set([
  'test',
  'invalid',
  'localhost',
  'example',
  'local',
  'internal',
  'home',
  'corp',
  'mail',
  'lan',
  'localdomain',
  'intranet',
  'private',
]);

/**
 * Whether a name can reach a server its owner runs on the Internet, which both detectors need: a
 * domain generation algorithm makes names its author can register (or claim under a dynamic-DNS or
 * free-hosting parent), and a DNS tunnel needs the authoritative server of its domain. Either way
 * the name needs a label under a top-level domain someone delegates. A single label never resolves
 * on the Internet: Chromium's intranet-redirect probes (three random 7-15 letter labels at every
 * start and network change) are the commonest random-looking names a benign host sends, and they
 * are single labels; names under `cluster.local` (Kubernetes services and their search-list
 * expansions) or `home.arpa` stay inside the network. Unknown top-level labels other than the
 * private ones count: malware uses alternative roots (`.bit`, OpenNIC's `.bazar`) through its own
 * resolvers.
 */
export function isInternetName(domain: string): boolean {
  let end = domain.length;
  while (end > 0 && domain.charCodeAt(end - 1) === 46) end -= 1;
  const dot = domain.lastIndexOf('.', end - 1);
  if (dot <= 0) return false;
  const tld = domain.slice(dot + 1, end).toLowerCase();
  if (PRIVATE_TLDS.has(tld)) return false;
  return !(tld === 'arpa' && /(^|\.)home\.arpa\.*$/i.test(domain));
}
