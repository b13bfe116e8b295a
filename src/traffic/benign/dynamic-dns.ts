import type { Random } from '../random.ts';
import { englishWords } from '../wordlist.ts';
import { BASE32, HEX, chars, ipv4 } from './labels.ts';
import { patternSource } from './source.ts';

/**
 * Parents under which dynamic-DNS services give customers names; every one is in the Public Suffix
 * List's private section (see psl-private.ts): No-IP, DuckDNS, Dyn, dynv6, ddnss.de, AVM MyFRITZ!,
 * Synology, QNAP, FreeDNS-style providers, Freebox, WD.
 */
const PARENTS = [
  'ddns.net',
  'duckdns.org',
  'hopto.org',
  'zapto.org',
  'sytes.net',
  'no-ip.org',
  'no-ip.biz',
  'no-ip.info',
  'myftp.org',
  'myftp.biz',
  'dyndns.org',
  'homeip.net',
  'dynv6.net',
  'ddnss.de',
  'synology.me',
  'myqnapcloud.com',
  'freeddns.org',
  'dynu.net',
  'serveftp.com',
  'servehttp.com',
  'servebeer.com',
  'redirectme.net',
  'ddns.me',
  'dyndns-home.com',
  'dyndns-server.com',
  'gotdns.ch',
  'spdns.de',
  'dnsalias.net',
  'is-a-geek.com',
  'selfip.com',
  'dynalias.com',
  'dyn-ip24.de',
  'theworkpc.com',
  'myds.me',
  'diskstation.me',
  'i234.me',
  'dscloud.me',
  'freeboxos.fr',
  'webhop.me',
  '3utilities.com',
  'bounceme.net',
  'ddnsking.com',
  'gotdns.org',
  'hopto.me',
  'onthewifi.com',
  'nsupdate.info',
  'dy.fi',
  'kozow.com',
  'ooguy.com',
  'accesscam.org',
  'camdvr.org',
  'vpndns.net',
  'dvrdns.org',
  'loseyourip.com',
  'freemyip.com',
];
/** What people run at home and name their hosts after. */
const THINGS = [
  'home',
  'homeserver',
  'server',
  'nas',
  'mynas',
  'cloud',
  'mycloud',
  'nextcloud',
  'owncloud',
  'plex',
  'jellyfin',
  'emby',
  'media',
  'kodi',
  'pi',
  'raspi',
  'raspberry',
  'pihole',
  'cam',
  'camera',
  'cctv',
  'dvr',
  'nvr',
  'ipcam',
  'vpn',
  'wireguard',
  'openvpn',
  'router',
  'gateway',
  'office',
  'shop',
  'files',
  'backup',
  'photos',
  'music',
  'minecraft',
  'mc',
  'craft',
  'game',
  'gaming',
  'valheim',
  'ark',
  'rust',
  'ts3',
  'teamspeak',
  'mumble',
  'homeassistant',
  'hass',
  'ha',
  'iobroker',
  'openhab',
  'unraid',
  'truenas',
  'proxmox',
  'pve',
  'esxi',
  'git',
  'gitea',
  'wiki',
  'blog',
  'web',
  'mail',
  'remote',
  'rdp',
  'ssh',
  'ftp',
  'sftp',
  'dev',
  'lab',
  'homelab',
];

let names: readonly string[] | undefined;
const firstNames = (): readonly string[] =>
  (names ??= englishWords()
    .filter((w) => /^[a-z]{3,9}$/.test(w))
    .filter((_, i) => i % 7 === 0));

/** A name a customer picks: things, their own name or a word, often with digits or a hyphen. */
function customerLabel(r: Random): string {
  const parts = [r.chance(0.6) ? r.pick(THINGS) : r.pick(firstNames())];
  if (r.chance(0.45)) parts.push(r.chance(0.5) ? r.pick(THINGS) : r.pick(firstNames()));
  let label = parts.join(r.chance(0.5) ? '-' : '');
  if (r.chance(0.45))
    label +=
      r.pick(['', '-']) + String(r.pick([r.int(1, 9), r.int(10, 99), r.int(1970, 2025), r.int(100, 999)]));
  return label.slice(0, 40).replace(/-+$/, '');
}

const SCHEMES: ((r: Random) => string)[] = [
  (r) => `${customerLabel(r)}.${r.pick(PARENTS)}`,
  (r) => `${customerLabel(r)}.${r.pick(PARENTS)}`,
  (r) => `${customerLabel(r)}.${r.pick(PARENTS)}`,
  // A host under the customer's name (`nas.smith.dynv6.net`, `cam1.home42.ddnss.de`).
  (r) =>
    `${r.pick(THINGS)}${r.chance(0.3) ? r.int(1, 4) : ''}.${customerLabel(r)}.${r.pick(['dynv6.net', 'ddnss.de', 'duckdns.org', 'spdns.de', 'freeddns.org'])}`,
  // AVM FRITZ!Box: `<16 base32>.myfritz.net` (the box's MyFRITZ! address).
  (r) => `${chars(r, BASE32, 16)}.myfritz.net`,
  // ngrok free tunnels: `<4 hex>-<ip with dashes>.ngrok-free.app`; paid/legacy `<8 hex>.ngrok.io`.
  (r) =>
    r.chance(0.6)
      ? `${chars(r, HEX, 4)}-${ipv4(r).join('-')}.ngrok-free.app`
      : `${chars(r, HEX, 8)}.ngrok.io`,
];

export const dynamicDns = patternSource(
  'dynamic-dns',
  'Customer names under dynamic-DNS parents of the PSL private section (homeserver42.ddns.net, ' +
    'nas.smith.dynv6.net, plex-2019.duckdns.org), AVM <16 base32>.myfritz.net and ngrok tunnel names; ' +
    'labels from home-server words and English words (an-array-of-english-words) with digits and hyphens',
  (r) => r.pick(SCHEMES)(r),
);
