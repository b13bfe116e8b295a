import type { LogLine } from '../src/stages/messages.ts';
import { subnetId } from '../src/stages/subnet.ts';
import type { Traffic } from '../src/traffic/index.ts';

/**
 * What the DGA prefilter passes of generated traffic, as the inspector gets it: the NXDOMAIN lines
 * as LogLines, per /24 subnet (the collector's key), in event-time order. Shared by the inspector
 * benches (inspector-spans.ts, inspector-disorder.ts).
 */
export function nxdomainLinesBySubnet(traffic: Traffic): Map<string, LogLine[]> {
  const prefixes = { ipv4_prefix_length: 24, ipv6_prefix_length: 64 };
  const bySubnet = new Map<string, LogLine[]>();
  for (const g of traffic.lines()) {
    const f = JSON.parse(g.line) as Record<string, string>;
    if (f.status_code !== 'NXDOMAIN') continue;
    const subnet = subnetId(g.srcIp, prefixes)!;
    const lines = bySubnet.get(subnet) ?? [];
    bySubnet.set(subnet, lines);
    lines.push({
      logline_id: `${subnet}-${lines.length}`,
      subnet_id: subnet,
      ts: new Date(g.atMs).toISOString().replace('Z', '000Z'),
      src_ip: g.srcIp,
      status_code: f.status_code,
      record_type: f.record_type!,
      size: f.size!,
      domain_name: f.domain_name!,
    });
  }
  return bySubnet;
}
