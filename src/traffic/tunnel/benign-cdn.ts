import { seededRandom } from '../random.ts';
import { LOWER_DIGITS, randomString, workingSet } from './benign-pick.ts';
import { expGap, paced, type TrafficStyle } from './query.ts';

/** CloudFront distributions, `d` + 13 characters: `d1a2b3c4d5e6f7.cloudfront.net`. */
export const cloudfront: TrafficStyle = {
  name: 'cdn-cloudfront',
  kind: 'benign',
  description: 'CloudFront distributions d<13 random chars>.cloudfront.net, a working set of 2-15 per host',
  typicalQueries: 120,
  session(o) {
    const r = seededRandom(`cloudfront:${o.seed}`);
    const next = workingSet(r, r.int(2, 15), () => `d${randomString(r, LOWER_DIGITS, 13)}`);
    return paced(
      o,
      () => expGap(r, 30_000),
      () => ({ name: `${next()}.cloudfront.net`, qtype: 'A' }),
    );
  },
};

/** Akamai edge hosts: `e12345.a.akamaiedge.net`, `e6789.dscb.akamaiedge.net` (CNAME targets of sites). */
export const akamai: TrafficStyle = {
  name: 'cdn-akamai',
  kind: 'benign',
  description: 'Akamai edge names e<digits>.<map>.akamaiedge.net, a working set of 3-25 per host',
  typicalQueries: 150,
  session(o) {
    const r = seededRandom(`akamai:${o.seed}`);
    const maps = ['a', 'b', 'dsca', 'dscb', 'dscd', 'dscg', 'dscx', 'dscr'];
    const next = workingSet(r, r.int(3, 25), () => `e${r.int(1, 99_999)}.${r.pick(maps)}`);
    return paced(
      o,
      () => expGap(r, 20_000),
      () => ({ name: `${next()}.akamaiedge.net`, qtype: 'A' }),
    );
  },
};

/** Fastly: `<customer>.map.fastly.net`, `dualstack.<x>.sni.global.fastly.net`, `<customer>.global.ssl.fastly.net`. */
export const fastly: TrafficStyle = {
  name: 'cdn-fastly',
  kind: 'benign',
  description:
    'Fastly service names <customer>.map.fastly.net, <letter>.sni.global.fastly.net, <customer>.global.ssl.fastly.net',
  typicalQueries: 100,
  session(o) {
    const r = seededRandom(`fastly:${o.seed}`);
    const customers = ['reddit', 'github', 'pypi', 'nytimes', 'shopify', 'imgur', 'vimeo', 'gitlab'];
    const next = workingSet(r, r.int(2, 12), () => {
      const c = `${r.pick(customers)}${r.chance(0.3) ? `-${r.int(1, 9)}` : ''}`;
      return r.pick([
        `${c}.map.fastly.net`,
        `dualstack.${c}.map.fastly.net`,
        `${randomString(r, 'abcdefghijklmnopqrstuvwxyz', 1)}.sni.global.fastly.net`,
        `${c}.global.ssl.fastly.net`,
      ]);
    });
    return paced(
      o,
      () => expGap(r, 30_000),
      () => ({ name: next(), qtype: 'A' }),
    );
  },
};

/**
 * YouTube video caches: `rr3---sn-4g5e6nzl.googlevideo.com` (`r<N>---sn-<8 chars>`), a few per
 * video, fetched again and again while streaming.
 */
export const googlevideo: TrafficStyle = {
  name: 'googlevideo',
  kind: 'benign',
  description: 'YouTube caches rN---sn-<8 chars>.googlevideo.com (and rN.sn-<8 chars>), a few per host',
  typicalQueries: 150,
  session(o) {
    const r = seededRandom(`googlevideo:${o.seed}`);
    const next = workingSet(r, r.int(3, 20), () => {
      const sn = `sn-${randomString(r, LOWER_DIGITS, 8)}`;
      return r.chance(0.8) ? `rr${r.int(1, 8)}---${sn}` : `r${r.int(1, 8)}.${sn}`;
    });
    return paced(
      o,
      () => expGap(r, 10_000),
      () => ({ name: `${next()}.googlevideo.com`, qtype: 'A' }),
    );
  },
};
