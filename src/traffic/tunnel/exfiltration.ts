import { seededRandom, type Random } from '../random.ts';
import { base32, base64dns, capacity, labels, randomBytes, textBytes } from './encoding.ts';
import { expGap, paced, type SessionOptions, type TrafficStyle } from './query.ts';
import { tunnelDomain } from './tunnel-domains.ts';

/**
 * DNSExfiltrator, after its README: the file is zipped and RC4-encrypted (so the payload is
 * random), an `init.<base32 of "name|chunks">.base64.<domain>` query announces it, then each chunk
 * goes as `<chunk index>.<base64url data in labels>.<domain>` (A/TXT), as fast as the resolver
 * answers unless throttled.
 */
export const dnsExfiltrator: TrafficStyle = {
  name: 'dnsexfiltrator',
  kind: 'tunnel',
  description: 'DNSExfiltrator: init query, then <chunk index>.<base64url of zipped+RC4 file in labels>',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`dnsexfiltrator:${o.seed}`);
    const domain = tunnelDomain(r);
    const room = capacity(domain, 6, 6);
    return paced(
      o,
      () => expGap(r, 100),
      (i) => {
        if (i === 0) {
          const header = new TextEncoder().encode(`report-${r.int(1, 99)}.xlsx|${o.queries - 1}`);
          return { name: `init.${labels(base32(header))}.base64.${domain}`, qtype: 'TXT' };
        }
        return { name: `${i - 1}.${labels(base64dns(randomBytes(r, room)))}.${domain}`, qtype: 'TXT' };
      },
    );
  },
};

/**
 * Generic exfiltration scripts (the common PowerShell/bash one-liners and red-team kits): the file,
 * often plain text, Base32-encoded into 30-63 character chunks with a counter label,
 * `<chunk>.<counter>.<domain>`, A queries; the answer is irrelevant (often NXDOMAIN).
 */
export const base32Exfil: TrafficStyle = {
  name: 'exfil-base32',
  kind: 'tunnel',
  description: 'generic script: Base32 chunks of a (text) file with a counter label, <chunk>.<n>.<domain>, A',
  typicalQueries: 200,
  session: (o) => chunkedExfil(o, seededRandom(`exfil-base32:${o.seed}`), () => 300),
};

/**
 * A patient exfiltrator: the same chunks, a few queries per minute (15-40 s apart), to stay under
 * volume thresholds.
 */
export const slowExfil: TrafficStyle = {
  name: 'slow-exfil',
  kind: 'tunnel',
  description: 'slow exfiltrator: Base32 chunks with counter, 1-4 queries per minute',
  typicalQueries: 60,
  session(o) {
    const r = seededRandom(`slow-exfil:${o.seed}`);
    return chunkedExfil(o, r, () => 15_000 + r.next() * 25_000);
  },
};

/** Slower still: one query every 4-8 minutes, beyond a short window idle timeout. */
export const trickleExfil: TrafficStyle = {
  name: 'trickle-exfil',
  kind: 'tunnel',
  description: 'trickle exfiltrator: Base32 chunks with counter, one query every 4-8 minutes',
  typicalQueries: 30,
  session(o) {
    const r = seededRandom(`trickle-exfil:${o.seed}`);
    return chunkedExfil(o, r, () => 240_000 + r.next() * 240_000);
  },
};

function chunkedExfil(o: SessionOptions, r: Random, gap: () => number) {
  const domain = tunnelDomain(r);
  const text = r.chance(0.6);
  const chunk = r.int(30, 63);
  const bytes = Math.floor((chunk * 5) / 8);
  const nx = r.chance(0.5);
  return paced(o, gap, (i) => {
    const payload = text ? textBytes(r, bytes) : randomBytes(r, bytes);
    return {
      name: `${labels(base32(payload))}.${i}.${domain}`,
      qtype: 'A' as const,
      rcode: nx ? ('NXDOMAIN' as const) : ('NOERROR' as const),
    };
  });
}
