import { createRequire } from 'node:module';
import type { Random } from './random.ts';

const require = createRequire(import.meta.url);

/**
 * Popular real domains, most popular first: the common mail and web providers that the
 * `email-providers` package ships (facebook.com, qq.com, yahoo.com, ...).
 */
export function popularDomains(): readonly string[] {
  return require('email-providers/common.json') as string[];
}

/** Several thousand real registered domains (`email-providers`' full list), for training. */
export function registeredDomains(): readonly string[] {
  return require('email-providers/all.json') as string[];
}

/** Host names that real traffic puts in front of a registered domain. */
export const WEB_SUBDOMAINS = [
  'www',
  'm',
  'api',
  'static',
  'cdn',
  'img',
  'login',
  'accounts',
  'news',
  'video',
];
export const MAIL_SUBDOMAINS = ['mail', 'smtp', 'imap', 'pop', 'mx1', 'mx2', 'autodiscover', 'webmail'];

const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A CDN edge name as browsers resolve them: CloudFront distributions, Akamai edge hosts and Fastly
 * services carry generated labels under a well-known provider domain.
 */
export function cdnHostname(random: Random): string {
  const pick = random.int(0, 2);
  if (pick === 0) {
    let id = 'd';
    for (let i = 0; i < 13; i += 1) id += BASE36[random.int(0, 35)];
    return `${id}.cloudfront.net`;
  }
  if (pick === 1) return `e${random.int(1000, 99999)}.${random.pick(['a', 'b', 'dscb', 'g'])}.akamaiedge.net`;
  return `${random.pick(['global', 'dualstack', 'prod'])}.${random.pick(['ssl', 'map'])}.fastly.net`;
}

/** A benign name around a registered domain: bare, a web or mail host, or (rarely) a CDN edge. */
export function benignHostname(random: Random, domain: string): string {
  const roll = random.next();
  if (roll < 0.45) return domain;
  if (roll < 0.75) return `${random.pick(WEB_SUBDOMAINS)}.${domain}`;
  if (roll < 0.93) return `${random.pick(MAIL_SUBDOMAINS)}.${domain}`;
  return cdnHostname(random);
}
