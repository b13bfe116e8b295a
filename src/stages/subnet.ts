import { isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths of `subnet_id` (the collector's `subnet_id` batch config). */
export interface SubnetPrefixes {
  readonly ipv4_prefix_length: number;
  readonly ipv6_prefix_length: number;
}

/**
 * The subnet id of an address: its network address under the prefix length, written
 * `<net>_<len>` (`10.2.54.0_24`, `2001:db8:1::_64`; IPv6 in RFC 5952 form). `undefined` when the
 * text is not an IPv4 or IPv6 address. An IPv6 zone (`%eth0`) is not part of the network.
 */
export function subnetId(address: string, prefixes: SubnetPrefixes): string | undefined {
  if (isIPv4(address)) {
    const length = prefixes.ipv4_prefix_length;
    const octets = address.split('.').map(Number);
    const value = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
    const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
    const net = (value & mask) >>> 0;
    return `${net >>> 24}.${(net >>> 16) & 255}.${(net >>> 8) & 255}.${net & 255}_${length}`;
  }
  const bare = address.split('%')[0] ?? '';
  if (!isIPv6(bare)) return undefined;
  const length = prefixes.ipv6_prefix_length;
  const groups = ipv6Groups(bare);
  const masked = groups.map((group, index) => {
    const bits = Math.max(0, Math.min(16, length - index * 16));
    return bits === 0 ? 0 : group & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${formatIpv6(masked)}_${length}`;
}

/** The eight 16-bit groups of a valid IPv6 address (embedded IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const before = parse(head);
  const after = rest === undefined ? [] : parse(rest);
  const missing = 8 - before.length - after.length;
  return [...before, ...Array<number>(missing).fill(0), ...after];
}

/** RFC 5952: lower case, no leading zeros, the longest run (>= 2) of zero groups as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
