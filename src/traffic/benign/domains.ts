import { createRequire } from 'node:module';
import { parse } from 'tldts';
import type { Random } from '../random.ts';

const require = createRequire(import.meta.url);

let registrable: readonly string[] | undefined;

/**
 * Real registrable domains for the pattern sources that need a customer's own domain (mail, SRV and
 * DKIM names, host labels): the `email-providers` list (ISC), kept where tldts says the name is a
 * registrable domain itself. Pattern sources therefore share domains with the 'email-providers' source.
 */
export function registrableDomains(): readonly string[] {
  registrable ??= [
    ...new Set((require('email-providers/all.json') as string[]).map((d) => d.toLowerCase())),
  ].filter((d) => parse(d).domain === d && /^[a-z0-9.-]+$/.test(d));
  return registrable;
}

/** A registrable domain and the company name in it (`acme` of `acme.co.uk`), from the real list. */
export function company(random: Random): { domain: string; name: string } {
  const domain = random.pick(registrableDomains());
  const name = parse(domain).domainWithoutSuffix ?? domain.split('.')[0] ?? 'corp';
  return { domain, name: name.replace(/\./g, '-') };
}
