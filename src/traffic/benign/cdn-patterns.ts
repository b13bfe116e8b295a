import type { Random } from '../random.ts';
import { company } from './domains.ts';
import { BASE36, DIGITS, HEX, chars, digits } from './labels.ts';
import { patternSource } from './source.ts';

/** The `sn-` labels of Google's video caches: 8 characters from this alphabet (e.g. `sn-4g5e6nsz`). */
const GOOGLEVIDEO = 'abcdefghijklmnopqrstuvwxyz0123456789'.replace(/[bcjmpqvwx]/g, '') + '-';
const customer = (r: Random): string => company(r).name.slice(0, 30);

const SCHEMES: ((r: Random) => string)[] = [
  // CloudFront distributions: `d` + 13 lower-case letters and digits.
  (r) => `d${chars(r, BASE36, 13)}.cloudfront.net`,
  // Akamai: edge hosts `e<n>.<map>.akamaiedge.net`, `a<n>.<map>.akamai.net`, customer CNAMEs
  // `<host>.<domain>.edgekey.net` / `.edgesuite.net`, media `<customer>-<n>.akamaized.net`.
  (r) =>
    `e${r.int(1, 99999)}.${r.pick(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'dscb', 'dscd', 'dsce', 'dscx', 'dscg'])}.akamaiedge.net`,
  (r) =>
    `a${r.int(1, 9999)}.${r.pick(['dscb', 'dscd', 'dsce', 'g', 'g2', 'w7', 'w10', 'na', 'gi3', 'dsct'])}.akamai.net`,
  (r) => {
    const c = company(r);
    return `${r.pick(['www', 'cdn', 'static', 'img', 'api', 'media', 'secure'])}.${c.domain}.${r.pick(['edgekey.net', 'edgesuite.net', 'edgekey-staging.net'])}`;
  },
  (r) => `${customer(r)}${r.chance(0.5) ? `-${r.pick(['vh', 'f', 'i', 'hls', 'dash'])}` : ''}.akamaized.net`,
  // Fastly: `<customer>.map.fastly.net`, `dualstack.<customer>.map.fastly.net`, `<customer>.global.ssl.fastly.net`,
  // `<customer>.freetls.fastly.net`, shared maps `<letter>.sni.global.fastly.net`, `<letter>.ssl.fastly.net`.
  (r) => {
    const c = customer(r);
    const kind = r.int(0, 4);
    if (kind === 0) return `${c}.map.fastly.net`;
    if (kind === 1) return `dualstack.${c}.map.fastly.net`;
    if (kind === 2) return `${c}.global.ssl.fastly.net`;
    if (kind === 3) return `${c}.freetls.fastly.net`;
    return `${r.pick('abcdefghijklmnopqrstuvwxyz'.split(''))}.${r.pick(['sni.global', 'ssl', 'shared.global'])}.fastly.net`;
  },
  // Cloudflare: Pages `<project>.pages.dev` and previews `<8 hex>.<project>.pages.dev`, Workers
  // `<worker>.<account>.workers.dev`, tunnels `<uuid>.cfargotunnel.com`, `<domain>.cdn.cloudflare.net`.
  (r) => `${r.chance(0.4) ? `${chars(r, HEX, 8)}.` : ''}${customer(r)}.pages.dev`,
  (r) => `${r.pick(['api', 'proxy', 'worker', 'redirect', 'auth', 'edge'])}.${customer(r)}.workers.dev`,
  (r) =>
    `${chars(r, HEX, 8)}-${chars(r, HEX, 4)}-${chars(r, HEX, 4)}-${chars(r, HEX, 4)}-${chars(r, HEX, 12)}.cfargotunnel.com`,
  (r) => `${r.chance(0.5) ? 'www.' : ''}${company(r).domain}.cdn.cloudflare.net`,
  // Azure Front Door `<endpoint>-<16 [a-h0-9]>.z01.azurefd.net` (and z02..), classic `<name>.azurefd.net`,
  // Azure CDN `<name>.azureedge.net`.
  (r) =>
    `${customer(r)}-${r.pick(['web', 'fd', 'frontend', 'cdn', 'api'])}-${chars(r, 'abcdefgh' + DIGITS, 16)}.z0${r.int(1, 2)}.azurefd.net`,
  (r) =>
    `${customer(r)}${r.chance(0.5) ? `-${r.pick(['cdn', 'static', 'assets'])}` : ''}.${r.pick(['azurefd.net', 'azureedge.net'])}`,
  // Google: video caches `r<n>---sn-<8>.googlevideo.com` (and `rr<n>---`), user content `lh<n>.googleusercontent.com`,
  // `<n>.bp.blogspot.com`, ggpht `yt<n>.ggpht.com`.
  (r) =>
    `${r.pick(['r', 'rr'])}${r.int(1, 20)}---sn-${chars(r, GOOGLEVIDEO.replace('-', ''), 4)}${r.chance(0.5) ? '-' : ''}${chars(r, GOOGLEVIDEO.replace('-', ''), 4)}.googlevideo.com`,
  (r) => `${r.pick(['lh', 'yt', 'play-lh'])}${r.int(3, 6)}.${r.pick(['googleusercontent.com', 'ggpht.com'])}`,
  (r) => `${r.int(1, 4)}.bp.blogspot.com`,
  // Facebook/Instagram CDN `scontent-<airport><n>-<n>.xx.fbcdn.net`, `scontent.c<dc>-<n>.fna.fbcdn.net`.
  (r) =>
    `scontent-${r.pick(['lhr', 'fra', 'ams', 'cdg', 'iad', 'sjc', 'lax', 'ord', 'sin', 'hkg', 'nrt', 'gru', 'waw', 'mad', 'mxp'])}${r.int(1, 8)}-${r.int(1, 2)}.${r.pick(['xx.fbcdn.net', 'cdninstagram.com'])}`,
  // Microsoft: Edge/Office CDNs `<name>-<hex>.b01.azurefd.net`, Windows update caches `<n>.tlu.dl.delivery.mp.microsoft.com`.
  (r) => `${r.int(1, 9)}.tlu.dl.delivery.mp.microsoft.com`,
  // Edgio/Edgecast `cs<n>.wpc.<4 hex>.edgecastcdn.net`, StackPath `<name>.<n>.stackpathcdn.com`, jsDelivr-like
  // numbered shards `cdn<n>.<domain>`.
  (r) => `cs${r.int(1, 999)}.wpc.${chars(r, HEX, 4)}.edgecastcdn.net`,
  (r) => `${customer(r)}-${digits(r, 4)}.kxcdn.com`,
  (r) => `${r.pick(['cdn', 'static', 'img', 'media', 'assets', 's'])}${r.int(0, 9)}.${company(r).domain}`,
];

export const cdnPatterns = patternSource(
  'cdn-patterns',
  'CDN edge hostnames as the CDNs document or serve them: CloudFront d<13 base36>, Akamai e<n>.x.akamaiedge.net ' +
    'and a<n>.dscb.akamai.net and edgekey/edgesuite CNAMEs, Fastly maps, Cloudflare Pages/Workers/tunnels, ' +
    'Azure Front Door and CDN, googlevideo r<n>---sn-<8>, Facebook scontent, Edgecast, KeyCDN; customer ' +
    'names from real company domains (email-providers)',
  (r) => r.pick(SCHEMES)(r),
);
