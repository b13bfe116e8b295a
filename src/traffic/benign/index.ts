/**
 * Benign DNS names for training and evaluating the DGA detector, by source: real names from lists that
 * registry packages ship, and names built from providers' documented naming schemes. See README.md.
 */
import { adguardTrackers } from './adguard-trackers.ts';
import { cdnPatterns } from './cdn-patterns.ts';
import { cloudPatterns } from './cloud-patterns.ts';
import { dynamicDns } from './dynamic-dns.ts';
import { emailProviders } from './email-providers.ts';
import { hostLabels } from './host-labels.ts';
import { idnNames } from './idn-names.ts';
import { internalNames } from './internal-names.ts';
import { pslPrivate } from './psl-private.ts';
import { reverseDns } from './reverse-dns.ts';
import { serviceRecords } from './service-records.ts';
import type { BenignSource } from './source.ts';
import { topSites } from './top-sites.ts';
import { vendorServices } from './vendor-services.ts';

export type { BenignSource } from './source.ts';
export { isHostname } from './source.ts';

/** Every source: the real lists first, then the pattern sources. */
export const BENIGN_SOURCES: readonly BenignSource[] = [
  topSites,
  emailProviders,
  adguardTrackers,
  pslPrivate,
  hostLabels,
  cloudPatterns,
  cdnPatterns,
  reverseDns,
  dynamicDns,
  serviceRecords,
  internalNames,
  vendorServices,
  idnNames,
];

/** The source called `name`; throws naming the known ones. */
export function benignSource(name: string): BenignSource {
  const source = BENIGN_SOURCES.find((s) => s.name === name);
  if (!source) {
    throw new Error(
      `unknown benign source '${name}' (known: ${BENIGN_SOURCES.map((s) => s.name).join(', ')})`,
    );
  }
  return source;
}
