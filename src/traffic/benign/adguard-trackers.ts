import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { realListSource } from './source.ts';

const require = createRequire(import.meta.url);

/**
 * AdGuard filter lists whose host rules name real third-party services: analytics and CNAME-cloaked
 * first-party trackers (3: Tracking Protection, e.g. `smetrics.lowes.com`), social widgets (4), mobile
 * ad SDK endpoints (11), consent managers (18) and chat/embed widgets (22). Left out on purpose: the
 * base and regional ad lists (2, 1, 16, 224, ...) carry many rotating pop-under domains that are
 * machine-made like DGA names, and the security lists (208, 255, 256, 257, 259) hold malware and
 * phishing names: neither is benign for a DGA detector.
 */
export const ADGUARD_RULESETS = [3, 4, 11, 18, 22] as const;

interface DnrRule {
  action?: { type?: string };
  condition?: { urlFilter?: string; initiatorDomains?: string[]; domains?: string[] };
}

/** `||host^` block rules that apply on every site: the host-level entries of the filter. */
const HOST_RULE = /^\|\|([a-z0-9.-]+\.[a-z][a-z0-9-]*)\^?$/;

function loadHosts(): string[] {
  const root = require.resolve('@adguard/dnr-rulesets/package.json').replace(/package\.json$/, '');
  const hosts: string[] = [];
  for (const id of ADGUARD_RULESETS) {
    const file = `${root}dist/filters/declarative/ruleset_${id}/ruleset_${id}.json`;
    const rules = JSON.parse(readFileSync(file, 'utf8')) as DnrRule[];
    for (const rule of rules) {
      const c = rule.condition;
      if (rule.action?.type !== 'block' || !c?.urlFilter || c.initiatorDomains || c.domains) continue;
      const m = HOST_RULE.exec(c.urlFilter.toLowerCase());
      if (m?.[1]) hosts.push(m[1]);
    }
  }
  return hosts;
}

export const adguardTrackers = realListSource(
  'adguard-trackers',
  'About 60,000 real full hostnames of trackers, analytics, CNAME-cloaked first-party trackers, mobile ' +
    'ad SDKs, consent managers and widgets (smetrics.lowes.com, sdk-api-v1.singular.net, ...): the ' +
    `unconditional ||host^ block rules of AdGuard filters ${ADGUARD_RULESETS.join(', ')} as shipped in ` +
    '@adguard/dnr-rulesets@2.0.20250603000111 (GPL-3.0-only; read at training time, not redistributed)',
  loadHosts,
);
