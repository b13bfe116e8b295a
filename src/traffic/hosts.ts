import { DGA_FAMILIES } from './dga-families.ts';
import type { Random } from './random.ts';

/** What a generated host really is: the ground truth a detection run is measured against. */
export type HostTruth =
  | { readonly ip: string; readonly role: 'benign' }
  | { readonly ip: string; readonly role: 'dga'; readonly family: string; readonly malwareSeed: number }
  | { readonly ip: string; readonly role: 'tunnel'; readonly domain: string };

export interface HostPlanOptions {
  /** Hosts in total (benign, infected and tunnelling). */
  readonly hosts: number;
  /** DGA families of the infected hosts, one host each. */
  readonly families: readonly string[];
  /** Whether one host tunnels data through DNS. */
  readonly tunnel: boolean;
  /** Hosts per /24 subnet. */
  readonly hostsPerSubnet: number;
}

export const DEFAULT_FAMILIES = ['conficker', 'necurs', 'suppobox', 'bamital'];

/**
 * Places hosts in 10.<x>.<y>.0/24 subnets and picks which are infected (with different families,
 * in different subnets where there are enough) and which one tunnels.
 */
export function planHosts(random: Random, o: HostPlanOptions): HostTruth[] {
  const special = o.families.length + (o.tunnel ? 1 : 0);
  if (o.hosts < special + 1)
    throw new RangeError(
      `${o.hosts} hosts cannot hold ${special} infected or tunnelling hosts and a benign one`,
    );
  for (const family of o.families)
    if (!DGA_FAMILIES.some((f) => f.name === family)) throw new RangeError(`unknown DGA family ${family}`);
  const ips: string[] = [];
  for (let i = 0; i < o.hosts; i += 1) {
    const subnet = Math.floor(i / o.hostsPerSubnet);
    ips.push(`10.${Math.floor(subnet / 250)}.${subnet % 250}.${10 + (i % o.hostsPerSubnet)}`);
  }
  // Spread the special hosts over the subnets: every (hosts / special)-th host, shifted at random.
  const stride = Math.floor(o.hosts / special);
  const offset = random.int(0, Math.max(0, stride - 1));
  const specialAt = Array.from({ length: special }, (_, k) => k * stride + offset);
  const hosts: HostTruth[] = ips.map((ip) => ({ ip, role: 'benign' }));
  o.families.forEach((family, k) => {
    const at = specialAt[k] ?? 0;
    hosts[at] = { ip: ips[at] ?? '', role: 'dga', family, malwareSeed: random.int(1, 1_000_000) };
  });
  if (o.tunnel) {
    const at = specialAt[special - 1] ?? 0;
    const domain = `${random.pick(['telemetry', 'backup', 'files', 'metrics', 'status'])}-${random.pick(['sync', 'relay', 'update', 'cloud'])}.${random.pick(['com', 'net', 'io'])}`;
    hosts[at] = { ip: ips[at] ?? '', role: 'tunnel', domain };
  }
  return hosts;
}
