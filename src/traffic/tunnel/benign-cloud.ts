import { seededRandom } from '../random.ts';
import { LOWER_DIGITS, randomHex, randomString, serviceName, workingSet } from './benign-pick.ts';
import { expGap, paced, type TrafficStyle } from './query.ts';

const AWS_REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];

/**
 * S3 buckets, virtual-hosted style: `<bucket>.s3.<region>.amazonaws.com`, `<bucket>.s3.amazonaws.com`;
 * bucket names from people (`prod-assets-7`) and from tools (CDK's
 * `cdk-hnb659fds-assets-<12-digit account>-<region>`), long and all different.
 */
export const s3: TrafficStyle = {
  name: 'cloud-s3',
  kind: 'benign',
  description: 'S3 buckets <bucket>.s3[.<region>].amazonaws.com, incl. CDK asset buckets with account ids',
  typicalQueries: 120,
  session(o) {
    const r = seededRandom(`s3:${o.seed}`);
    const account = String(r.int(100_000, 999_999)) + String(r.int(100_000, 999_999));
    const next = workingSet(r, r.int(2, 20), () => {
      const region = r.pick(AWS_REGIONS);
      const bucket = r.chance(0.3)
        ? `cdk-${randomString(r, LOWER_DIGITS, 9)}-assets-${account}-${region}`
        : `${serviceName(r, r.int(2, 3))}${r.chance(0.5) ? `-${randomHex(r, 8)}` : ''}`;
      return r.chance(0.6) ? `${bucket}.s3.${region}` : `${bucket}.s3`;
    });
    return paced(
      o,
      () => expGap(r, 15_000),
      () => ({ name: `${next()}.amazonaws.com`, qtype: 'A' }),
    );
  },
};

/**
 * Azure Storage: `<account>.blob.core.windows.net` (accounts of 3-24 lowercase letters and digits,
 * often generated: `st7f3a9c2b1d4e`), with the queue/table/file endpoints and static websites
 * (`<account>.z13.web.core.windows.net`).
 */
export const azureBlob: TrafficStyle = {
  name: 'cloud-azure-blob',
  kind: 'benign',
  description:
    'Azure Storage <account>.blob|queue|table.core.windows.net and <account>.zNN.web.core.windows.net',
  typicalQueries: 120,
  session(o) {
    const r = seededRandom(`azure-blob:${o.seed}`);
    const next = workingSet(r, r.int(2, 15), () => {
      const account = r.chance(0.5)
        ? `st${randomString(r, LOWER_DIGITS, r.int(10, 22))}`
        : serviceName(r, 2).replace(/-/g, '');
      return r.chance(0.85)
        ? `${account}.${r.pick(['blob', 'blob', 'queue', 'table', 'file'])}.core`
        : `${account}.z${r.int(1, 39)}.web.core`;
    });
    return paced(
      o,
      () => expGap(r, 15_000),
      () => ({ name: `${next()}.windows.net`, qtype: 'A' }),
    );
  },
};

/**
 * Elastic Load Balancing: `<name>-<10 digits>.<region>.elb.amazonaws.com` (classic/ALB, `internal-`
 * for internal ones) and `<name>-<16 hex>.elb.<region>.amazonaws.com` (NLB): microservices resolve
 * many of them.
 */
export const elb: TrafficStyle = {
  name: 'cloud-elb',
  kind: 'benign',
  description:
    'load balancers [internal-]<name>-<10 digits>.<region>.elb.amazonaws.com and NLB <name>-<16 hex>.elb.<region>',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`elb:${o.seed}`);
    const next = workingSet(r, r.int(3, 30), () => {
      const region = r.pick(AWS_REGIONS);
      const name = serviceName(r, r.int(1, 3));
      if (r.chance(0.3)) return `${name}-${randomHex(r, 16)}.elb.${region}`;
      const digits = String(r.int(100_000, 999_999)) + String(r.int(1000, 9999));
      return `${r.chance(0.4) ? 'internal-' : ''}${name}-${digits}.${region}.elb`;
    });
    return paced(
      o,
      () => expGap(r, 5_000),
      () => ({ name: `${next()}.amazonaws.com`, qtype: 'A' }),
    );
  },
};

/**
 * A mail gateway resolving the Exchange Online MX targets of the domains it sends to:
 * `<domain-with-dashes>.mail.protection.outlook.com`, one per recipient domain.
 */
export const outlookMail: TrafficStyle = {
  name: 'mail-outlook',
  kind: 'benign',
  description: 'mail gateway: MX targets <recipient-domain-dashed>.mail.protection.outlook.com (MX/A)',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`outlook-mail:${o.seed}`);
    const tlds = ['com', 'de', 'co-uk', 'org', 'nl', 'fr', 'com-au'];
    const next = workingSet(r, r.int(10, 80), () => {
      const org = `${serviceName(r, r.int(1, 2))}${r.chance(0.5) ? randomString(r, 'abcdefghijklmnopqrstuvwxyz', r.int(3, 9)) : ''}`;
      return `${org}-${r.pick(tlds)}.mail.protection`;
    });
    return paced(
      o,
      () => expGap(r, 20_000),
      () => ({ name: `${next()}.outlook.com`, qtype: r.chance(0.5) ? 'MX' : 'A' }),
    );
  },
};
