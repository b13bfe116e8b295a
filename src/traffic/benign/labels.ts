import type { Random } from '../random.ts';

/** Alphabets and label makers shared by the pattern sources. */
export const HEX = '0123456789abcdef';
export const DIGITS = '0123456789';
export const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** RFC 4648 base32 in lower case (Google's OAuth client ids, SES DKIM tokens use [a-z0-9]). */
export const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` characters drawn uniformly from `alphabet`. */
export function chars(random: Random, alphabet: string, length: number): string {
  let s = '';
  for (let i = 0; i < length; i += 1) s += alphabet[random.int(0, alphabet.length - 1)];
  return s;
}

/** A decimal number of exactly `length` digits (no leading zero). */
export function digits(random: Random, length: number): string {
  return String(random.int(1, 9)) + chars(random, DIGITS, length - 1);
}

/** A dotted IPv4 address's four octets in a plausible public or private range. */
export function ipv4(random: Random, first?: readonly number[]): [number, number, number, number] {
  const a = first ? random.pick(first) : random.int(1, 223);
  return [a, random.int(0, 255), random.int(0, 255), random.int(1, 254)];
}

/** Regions as the cloud providers spell them in hostnames. */
export const AWS_REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-central-1',
  'eu-central-2',
  'eu-north-1',
  'eu-south-1',
  'ap-south-1',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-southeast-1',
  'ap-southeast-2',
  'sa-east-1',
  'me-south-1',
  'af-south-1',
];
export const AZURE_REGIONS = [
  'eastus',
  'eastus2',
  'westus',
  'westus2',
  'westus3',
  'centralus',
  'northeurope',
  'westeurope',
  'uksouth',
  'ukwest',
  'francecentral',
  'germanywestcentral',
  'swedencentral',
  'japaneast',
  'southeastasia',
  'eastasia',
  'australiaeast',
  'canadacentral',
  'brazilsouth',
  'centralindia',
  'koreacentral',
  'switzerlandnorth',
];
export const GCP_REGIONS = [
  'us-central1',
  'us-east1',
  'us-east4',
  'us-west1',
  'europe-west1',
  'europe-west2',
  'europe-west3',
  'europe-west4',
  'europe-north1',
  'asia-east1',
  'asia-northeast1',
  'asia-southeast1',
  'australia-southeast1',
];

/** Words people and teams put in the names of their machines, buckets, apps and services. */
export const SERVICE_WORDS = [
  'api',
  'app',
  'web',
  'www',
  'auth',
  'login',
  'sso',
  'admin',
  'portal',
  'shop',
  'store',
  'cart',
  'checkout',
  'pay',
  'payments',
  'billing',
  'orders',
  'search',
  'media',
  'images',
  'img',
  'static',
  'assets',
  'cdn',
  'files',
  'uploads',
  'backup',
  'backups',
  'logs',
  'data',
  'analytics',
  'metrics',
  'events',
  'ingest',
  'stream',
  'video',
  'chat',
  'mail',
  'notify',
  'push',
  'gateway',
  'proxy',
  'edge',
  'frontend',
  'backend',
  'service',
  'worker',
  'jobs',
  'queue',
  'cache',
  'db',
  'sql',
  'report',
  'reports',
  'dashboard',
  'grafana',
  'prometheus',
  'jenkins',
  'gitlab',
  'git',
  'ci',
  'build',
  'docs',
  'wiki',
  'blog',
  'news',
  'status',
  'support',
  'help',
  'crm',
  'erp',
  'hr',
  'payroll',
  'inventory',
  'catalog',
  'users',
  'accounts',
  'profile',
  'content',
  'cms',
  'wordpress',
  'site',
  'website',
  'landing',
  'marketing',
  'partner',
  'vendor',
  'customer',
  'mobile',
  'ios',
  'android',
  'game',
  'games',
  'cloud',
  'platform',
  'core',
  'main',
  'public',
  'internal',
  'private',
];
export const ENVIRONMENTS = [
  'prod',
  'production',
  'prd',
  'stage',
  'staging',
  'stg',
  'dev',
  'test',
  'qa',
  'uat',
  'demo',
  'sandbox',
];

/** A team's name for a resource: words, an environment and sometimes a number, joined by hyphens. */
export function resourceName(random: Random, company: string, maxLength = 40): string {
  const parts: string[] = [];
  if (random.chance(0.5)) parts.push(company);
  parts.push(random.pick(SERVICE_WORDS));
  if (random.chance(0.4)) parts.push(random.pick(SERVICE_WORDS));
  if (random.chance(0.6)) parts.push(random.pick(ENVIRONMENTS));
  if (random.chance(0.25)) parts.push(String(random.int(1, 99)).padStart(random.chance(0.5) ? 2 : 1, '0'));
  let name = parts.join('-');
  if (name.length > maxLength) name = name.slice(0, maxLength).replace(/-+$/, '');
  return name;
}
