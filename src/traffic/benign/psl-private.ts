import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { domainToASCII } from 'node:url';
import { getPublicSuffix } from 'tldts';
import { realListSource } from './source.ts';

const require = createRequire(import.meta.url);

/**
 * Whether a Public Suffix List rule is in the PRIVATE section (a company's parent domain under which
 * customers get names: github.io, herokuapp.com, blogspot.com, duckdns.org, ...): the ICANN-only
 * lookup of tldts does not know it as a suffix, the lookup with private domains does.
 */
function isPrivateRule(rule: string, wildcard: boolean): boolean {
  const suffix = wildcard ? `y.${rule}` : rule;
  const probe = `x.${suffix}`;
  return (
    getPublicSuffix(probe, { allowPrivateDomains: true }) === suffix && getPublicSuffix(probe) !== suffix
  );
}

let privateRules: readonly string[] | undefined;

/** The PSL's private section, wildcards (`*.`) dropped, exceptions (`!`) skipped, IDNs in punycode. */
export function pslPrivateSuffixes(): readonly string[] {
  if (privateRules) return privateRules;
  // psl ships the list as an ES module of rule strings (data/rules.js); it is plain JSON after `export default`.
  // The package exports only its code: find its folder from the main file (dist/psl.cjs).
  const path = join(dirname(dirname(require.resolve('psl'))), 'data', 'rules.js');
  const text = readFileSync(path, 'utf8');
  const rules = JSON.parse(
    text.slice(text.indexOf('['), text.lastIndexOf(']') + 1).replace(/,\s*\]$/, ']'),
  ) as string[];
  const out: string[] = [];
  for (const raw of rules) {
    if (raw.startsWith('!')) continue;
    const wildcard = raw.startsWith('*.');
    const rule = domainToASCII(wildcard ? raw.slice(2) : raw);
    if (rule.includes('.') && isPrivateRule(rule, wildcard)) out.push(rule);
  }
  privateRules = out;
  return out;
}

export const pslPrivate = realListSource(
  'psl-private',
  'The PRIVATE section of the Public Suffix List: hosting, cloud and dynamic-DNS parents such as ' +
    'github.io, herokuapp.com, blogspot.com, ddns.net, duckdns.org (wildcards without "*."), from ' +
    'data/rules.js of psl@1.15.0 (package MIT, list MPL-2.0), sections told apart with tldts',
  pslPrivateSuffixes,
);
