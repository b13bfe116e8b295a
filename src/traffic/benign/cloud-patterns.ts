import type { Random } from '../random.ts';
import { company } from './domains.ts';
import {
  AWS_REGIONS,
  AZURE_REGIONS,
  BASE36,
  DIGITS,
  GCP_REGIONS,
  HEX,
  chars,
  digits,
  ipv4,
  resourceName,
} from './labels.ts';
import { patternSource } from './source.ts';

/** A customer's resource name, from a real company name and service words (`acme-api-prod`). */
const res = (random: Random, max = 32): string => resourceName(random, company(random).name, max);
/** Azure storage accounts and similar: 3..24 lower-case letters and digits, no hyphens. */
const compact = (random: Random, max = 24): string => {
  const s = res(random, 60).replace(/-/g, '');
  return (s.length >= 3 ? s : `${s}data`).slice(0, max);
};

/** Each scheme as the provider's documentation describes its generated names. */
const SCHEMES: ((r: Random) => string)[] = [
  // AWS classic and application load balancers: `<name>-<id>.<region>.elb.amazonaws.com`, the name up to
  // 32 characters, the id a decimal number; internal ones are prefixed `internal-`.
  (r) =>
    `${r.chance(0.2) ? 'internal-' : ''}${res(r)}-${digits(r, r.int(9, 10))}.${r.pick(AWS_REGIONS)}.elb.amazonaws.com`,
  // Kubernetes `type: LoadBalancer` services on EKS: `a` + the service UID's hex (32 chars in all).
  (r) => `a${chars(r, HEX, 31)}-${digits(r, r.int(9, 10))}.${r.pick(AWS_REGIONS)}.elb.amazonaws.com`,
  // Network load balancers: `<name>-<16 hex>.elb.<region>.amazonaws.com`.
  (r) =>
    `${r.chance(0.5) ? `a${chars(r, HEX, 31)}` : res(r)}-${chars(r, HEX, 16)}.elb.${r.pick(AWS_REGIONS)}.amazonaws.com`,
  // EC2 public DNS: `ec2-<ip>.compute-1.amazonaws.com` in us-east-1, `ec2-<ip>.<region>.compute.amazonaws.com` elsewhere.
  (r) => {
    const ip = ipv4(r, [3, 13, 18, 34, 35, 44, 52, 54]).join('-');
    const region = r.pick(AWS_REGIONS);
    return region === 'us-east-1'
      ? `ec2-${ip}.compute-1.amazonaws.com`
      : `ec2-${ip}.${region}.compute.amazonaws.com`;
  },
  // EC2 private DNS: `ip-<ip>.ec2.internal` (us-east-1) or `ip-<ip>.<region>.compute.internal`.
  (r) => {
    const ip = ipv4(r, [10, 172, 192]).join('-');
    return r.chance(0.4) ? `ip-${ip}.ec2.internal` : `ip-${ip}.${r.pick(AWS_REGIONS)}.compute.internal`;
  },
  // S3: virtual-hosted buckets `<bucket>.s3.<region>.amazonaws.com`, legacy `<bucket>.s3.amazonaws.com`,
  // website endpoints `<bucket>.s3-website-<region>.amazonaws.com`; buckets often end in an account id.
  (r) => {
    const bucket = r.chance(0.3) ? `${res(r, 40)}-${digits(r, 12)}` : res(r, 50);
    const kind = r.int(0, 2);
    if (kind === 0) return `${bucket}.s3.amazonaws.com`;
    if (kind === 1) return `${bucket}.s3.${r.pick(AWS_REGIONS)}.amazonaws.com`;
    return `${bucket}.s3-website-${r.pick(AWS_REGIONS)}.amazonaws.com`;
  },
  // API Gateway `<10 base36>.execute-api.<region>.amazonaws.com`, Lambda function URLs `<32 base36>.lambda-url.<region>.on.aws`.
  (r) => `${chars(r, BASE36, 10)}.execute-api.${r.pick(AWS_REGIONS)}.amazonaws.com`,
  (r) => `${chars(r, BASE36, 32)}.lambda-url.${r.pick(AWS_REGIONS)}.on.aws`,
  // RDS `<db>.<12 base36>.<region>.rds.amazonaws.com`; ElastiCache `<name>.<6 base36>.<n>.<region-abbr>.cache.amazonaws.com`.
  (r) => `${res(r, 40)}.${chars(r, BASE36, 12)}.${r.pick(AWS_REGIONS)}.rds.amazonaws.com`,
  (r) =>
    `${res(r, 20)}.${chars(r, BASE36, 6)}.${r.chance(0.5) ? 'clustercfg.' : `000${r.int(1, 3)}.`}${r.pick(['use1', 'usw2', 'euw1', 'euc1', 'apse1'])}.cache.amazonaws.com`,
  // Azure: storage `<account>.blob|queue|table|file.core.windows.net`, App Service `<app>.azurewebsites.net`
  // (new apps: `<app>-<16 base36>.<region>-01.azurewebsites.net`), Kudu `<app>.scm.azurewebsites.net`.
  (r) => `${compact(r)}.${r.pick(['blob', 'blob', 'queue', 'table', 'file', 'dfs'])}.core.windows.net`,
  (r) => `${res(r, 40)}${r.chance(0.3) ? '.scm' : ''}.azurewebsites.net`,
  (r) => `${res(r, 30)}-${chars(r, 'abcdefgh' + DIGITS, 16)}.${r.pick(AZURE_REGIONS)}-01.azurewebsites.net`,
  // Azure VMs `<label>.<region>.cloudapp.azure.com`, Cloud Services `<name>.cloudapp.net`, SQL `<server>.database.windows.net`,
  // Key Vault `<vault>.vault.azure.net`, Traffic Manager `<profile>.trafficmanager.net`, ACR `<name>.azurecr.io`.
  (r) => `${res(r)}.${r.pick(AZURE_REGIONS)}.cloudapp.azure.com`,
  (r) => `${res(r)}.cloudapp.net`,
  (r) => `${res(r, 40)}.database.windows.net`,
  (r) => `${res(r, 24)}.vault.azure.net`,
  (r) => `${res(r)}.trafficmanager.net`,
  (r) => `${compact(r, 50)}.azurecr.io`,
  // Microsoft 365 tenants: `<tenant>.sharepoint.com`, `<tenant>-my.sharepoint.com`, `<tenant>.onmicrosoft.com`,
  // and the MX host `<domain with dashes>.mail.protection.outlook.com`.
  (r) => {
    const c = company(r);
    const kind = r.int(0, 3);
    if (kind === 0) return `${c.name}.sharepoint.com`;
    if (kind === 1) return `${c.name}-my.sharepoint.com`;
    if (kind === 2) return `${c.name}.onmicrosoft.com`;
    return `${c.domain.replace(/\./g, '-')}.mail.protection.outlook.com`;
  },
  // GCP: Cloud Run `<service>-<10 base36>-<region code>.a.run.app` and `<service>-<project number>.<region>.run.app`.
  (r) =>
    `${res(r, 30)}-${chars(r, BASE36, 10)}-${r.pick(['uc', 'ue', 'uw', 'ew', 'el', 'nw', 'an', 'as', 'et'])}.a.run.app`,
  (r) => `${res(r, 30)}-${digits(r, 12)}.${r.pick(GCP_REGIONS)}.run.app`,
  // App Engine `<project>.appspot.com`, `<version>-dot-<project>.appspot.com`, `<project>.<region code>.r.appspot.com`.
  (r) => {
    const project = `${res(r, 24)}${r.chance(0.4) ? `-${digits(r, 6)}` : ''}`;
    const kind = r.int(0, 2);
    if (kind === 0) return `${project}.appspot.com`;
    if (kind === 1) return `${r.pick(['v1', 'v2', 'staging', digits(r, 8)])}-dot-${project}.appspot.com`;
    return `${project}.${r.pick(['uc', 'ew', 'an', 'ue'])}.r.appspot.com`;
  },
  // Firebase `<project>.web.app` / `<project>.firebaseapp.com`, GCS `<bucket>.storage.googleapis.com`.
  (r) =>
    `${res(r, 24)}${r.chance(0.4) ? `-${chars(r, BASE36, 5)}` : ''}.${r.pick(['web.app', 'firebaseapp.com', 'firebaseio.com'])}`,
  (r) => `${res(r, 40)}.storage.googleapis.com`,
  // Google OAuth client ids: `<12-digit project number>-<32 [a-z0-9]>.apps.googleusercontent.com`.
  (r) =>
    `${digits(r, 12)}-${chars(r, 'abcdefghijklmnopqrstuvwxyz0123456789', 32)}.apps.googleusercontent.com`,
  // Heroku `<app>.herokuapp.com` and new apps `<app>-<12 hex>.herokuapp.com`; Netlify deploy previews
  // `<24 hex>--<site>.netlify.app`; Vercel previews `<project>-<9 base36>-<team>.vercel.app`.
  (r) => `${res(r, 30)}${r.chance(0.5) ? `-${chars(r, HEX, 12)}` : ''}.herokuapp.com`,
  (r) => `${r.chance(0.5) ? `${chars(r, HEX, 24)}--` : ''}${res(r, 30)}.netlify.app`,
  (r) =>
    `${res(r, 25)}${r.chance(0.6) ? `-${chars(r, BASE36, 9)}-${company(r).name.slice(0, 20)}` : ''}.vercel.app`,
];

export const cloudPatterns = patternSource(
  'cloud-patterns',
  'Cloud provider hostnames with ids, hashes and regions as AWS (ELB/ALB/NLB incl. Kubernetes a<hex> ' +
    'names, EC2 public and private DNS, S3, API Gateway, Lambda URLs, RDS, ElastiCache), Azure (storage, ' +
    'App Service, cloudapp, SQL, Key Vault, Traffic Manager, ACR, Microsoft 365 tenants), GCP (Cloud Run, ' +
    'App Engine, Firebase, GCS, OAuth client ids) and Heroku/Netlify/Vercel document them; customer ' +
    'names from real company names (email-providers) and service words',
  (r) => r.pick(SCHEMES)(r),
);
