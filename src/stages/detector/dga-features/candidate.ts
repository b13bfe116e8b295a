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
 * Whether a name can be a DGA's: a domain generation algorithm makes names its author can register
 * (or claim under a dynamic-DNS or free-hosting parent), so the name needs a label under a top-level
 * domain someone delegates. A single label never resolves on the Internet: Chromium's
 * intranet-redirect probes (three random 7-15 letter labels at every start and network change) are
 * the commonest random-looking names a benign host sends, and they are single labels; so are other
 * search-list expansions' first tries. Unknown top-level labels other than the private ones stay
 * candidates: malware uses alternative roots (`.bit`, OpenNIC's `.bazar`) through its own resolvers.
 */
export function isDgaCandidate(domain: string): boolean {
  let end = domain.length;
  while (end > 0 && domain.charCodeAt(end - 1) === 46) end -= 1;
  const dot = domain.lastIndexOf('.', end - 1);
  if (dot <= 0) return false;
  const tld = domain.slice(dot + 1, end).toLowerCase();
  if (PRIVATE_TLDS.has(tld)) return false;
  return !(tld === 'arpa' && /(^|\.)home\.arpa\.*$/i.test(domain));
}
