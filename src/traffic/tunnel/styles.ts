import { akamai, cloudfront, fastly, googlevideo } from './benign-cdn.ts';
import { azureBlob, elb, outlookMail, s3 } from './benign-cloud.ts';
import { dnsbl, mcafeeGti, ptrIpv4, ptrIpv6, sophosXl } from './benign-lookups.ts';
import { dnsSd, ntpPool } from './benign-services.ts';
import { cobaltStrike } from './cobalt-strike.ts';
import { dns2tcp } from './dns2tcp.ts';
import { dnscat2 } from './dnscat2.ts';
import { base32Exfil, dnsExfiltrator, slowExfil, trickleExfil } from './exfiltration.ts';
import { iodine } from './iodine.ts';
import type { TrafficStyle } from './query.ts';

/** Tunnelling and exfiltration tools, each talking to one registrable domain per session. */
export const TUNNEL_STYLES: readonly TrafficStyle[] = [
  iodine,
  dnscat2,
  dns2tcp,
  dnsExfiltrator,
  base32Exfil,
  cobaltStrike,
  slowExfil,
  trickleExfil,
];

/** Benign services with ids, hashes or addresses in their subdomains: the hard negatives. */
export const BENIGN_STYLES: readonly TrafficStyle[] = [
  cloudfront,
  akamai,
  fastly,
  googlevideo,
  s3,
  azureBlob,
  elb,
  outlookMail,
  mcafeeGti,
  sophosXl,
  dnsbl,
  ntpPool,
  dnsSd,
  ptrIpv4,
  ptrIpv6,
];

export const ALL_STYLES: readonly TrafficStyle[] = [...TUNNEL_STYLES, ...BENIGN_STYLES];

export function trafficStyle(name: string): TrafficStyle {
  const style = ALL_STYLES.find((s) => s.name === name);
  if (!style)
    throw new RangeError(`unknown traffic style "${name}" (${ALL_STYLES.map((s) => s.name).join(', ')})`);
  return style;
}
