import type { Random } from '../random.ts';
import { company } from './domains.ts';
import { BASE32, HEX, chars, digits } from './labels.ts';
import { patternSource } from './source.ts';

/** SRV owner names (RFC 2782, RFC 6186 mail, RFC 6764 CalDAV/CardDAV, XMPP, SIP, Microsoft's Lync/Teams). */
const SRV = [
  '_sip._tcp',
  '_sip._udp',
  '_sips._tcp',
  '_sipfederationtls._tcp',
  '_sipinternaltls._tcp',
  '_xmpp-client._tcp',
  '_xmpp-server._tcp',
  '_imap._tcp',
  '_imaps._tcp',
  '_pop3s._tcp',
  '_submission._tcp',
  '_submissions._tcp',
  '_autodiscover._tcp',
  '_caldavs._tcp',
  '_carddavs._tcp',
  '_ldap._tcp',
  '_kerberos._tcp',
  '_kerberos._udp',
  '_kpasswd._udp',
  '_gc._tcp',
  '_minecraft._tcp',
  '_matrix._tcp',
  '_matrix-fed._tcp',
  '_h323cs._tcp',
  '_stun._udp',
  '_turn._udp',
  '_jabber._tcp',
  '_vlmcs._tcp',
  '_http._tcp',
  '_https._tcp',
];
/** DKIM selectors that mail providers document (Microsoft 365, Google Workspace, Mailchimp, SendGrid, ...). */
const SELECTORS = [
  'selector1',
  'selector2',
  'google',
  'k1',
  'k2',
  'k3',
  's1',
  's2',
  'default',
  'dkim',
  'mail',
  'smtp',
  'mandrill',
  'mxvault',
  'fm1',
  'fm2',
  'fm3',
  'protonmail',
  'protonmail2',
  'protonmail3',
  'zoho',
  'pm',
  'mte1',
  'em',
  'sig1',
  'everlytickey1',
  'everlytickey2',
  'cm',
  'hs1',
  'hs2',
  'krs',
  'scph0117',
  'key1',
  'dk',
  'mailjet',
];
/** Mail exchangers that the big hosted-mail services document for customers. */
const MX_HOSTS = [
  'aspmx.l.google.com',
  'alt1.aspmx.l.google.com',
  'alt2.aspmx.l.google.com',
  'aspmx2.googlemail.com',
  'mx1.zoho.eu',
  'mx2.zoho.com',
  'mx.zoho.com',
  'mx01.mail.icloud.com',
  'mx02.mail.icloud.com',
  'mail.protonmail.ch',
  'mailsec.protonmail.ch',
  'in1-smtp.messagingengine.com',
  'in2-smtp.messagingengine.com',
  'mx00.ionos.de',
  'mx01.ionos.de',
  'mx.ovh.net',
  'mx1.mail.ovh.net',
  'mx1.hostinger.com',
  'mx.yandex.net',
  'mxbiz1.qq.com',
];

const SCHEMES: ((r: Random) => string)[] = [
  (r) => `${r.pick(SRV)}.${company(r).domain}`,
  // Active Directory locator records (MS-ADTS): `_ldap._tcp.dc._msdcs.<domain>`, per site, per DC GUID.
  (r) => {
    const d = `${r.pick(['corp', 'ad', 'int', 'office', 'ds', 'hq'])}.${company(r).domain}`;
    const kind = r.int(0, 4);
    if (kind === 0) return `_ldap._tcp.dc._msdcs.${d}`;
    if (kind === 1)
      return `_ldap._tcp.${r.pick(['default-first-site-name', 'hq', 'branch1', 'berlin', 'london', 'nyc'])}._sites.dc._msdcs.${d}`;
    if (kind === 2) return `_kerberos._tcp.dc._msdcs.${d}`;
    if (kind === 3)
      return `${chars(r, HEX, 8)}-${chars(r, HEX, 4)}-${chars(r, HEX, 4)}-${chars(r, HEX, 4)}-${chars(r, HEX, 12)}._msdcs.${d}`;
    return `_ldap._tcp.pdc._msdcs.${d}`;
  },
  // DKIM keys `<selector>._domainkey.<domain>`, dated selectors (`20230601`), and Amazon SES Easy DKIM
  // tokens (32 [a-z0-9]); DMARC `_dmarc.<domain>`; MTA-STS `_mta-sts.<domain>`; TLS-RPT `_smtp._tls.<domain>`.
  (r) => `${r.pick(SELECTORS)}._domainkey.${company(r).domain}`,
  (r) =>
    `${r.chance(0.5) ? `${r.int(2015, 2025)}${String(r.int(1, 12)).padStart(2, '0')}${String(r.int(1, 28)).padStart(2, '0')}` : chars(r, BASE32.slice(0, 26) + '0123456789', 32)}._domainkey.${company(r).domain}`,
  (r) => `${r.pick(['_dmarc', '_mta-sts', '_smtp._tls', '_bimi', 'default._bimi'])}.${company(r).domain}`,
  // Verification and SPF include hosts: `_spf.<provider>`, `spf.protection.outlook.com`, `_acme-challenge.<host>`.
  (r) =>
    `_acme-challenge.${r.chance(0.5) ? `${r.pick(['www', 'mail', 'api', 'vpn', 'portal'])}.` : ''}${company(r).domain}`,
  // A company's own mail hosts: `mx1.<domain>`, `mail.<domain>`, `smtp-<n>.<domain>`, `autodiscover.<domain>`.
  (r) =>
    `${r.pick(['mx', 'mx1', 'mx2', 'mx01', 'mx02', 'mail', 'mail2', 'smtp', 'smtp1', 'smtp-out', 'imap', 'pop', 'webmail', 'autodiscover', 'autoconfig', 'owa', 'exchange', 'mailgw', 'relay'])}.${company(r).domain}`,
  (r) => r.pick(MX_HOSTS),
  // Proofpoint `mx0a-<8 digits>.pphosted.com`, Mimecast `<region>-smtp-inbound-<n>.mimecast.com`,
  // Barracuda `d<9 digits>a.ess.barracudanetworks.com`.
  (r) => `mx0${r.pick(['a', 'b'])}-00${digits(r, 6)}.pphosted.com`,
  (r) => `${r.pick(['eu', 'us', 'de', 'uk', 'au', 'za'])}-smtp-inbound-${r.int(1, 2)}.mimecast.com`,
  (r) => `d${digits(r, 9)}${r.pick(['a', 'b'])}.ess.barracudanetworks.com`,
];

export const serviceRecords = patternSource(
  'service-records',
  'Mail and service-discovery names: SRV owners (_sip._tcp, _xmpp-client._tcp, _caldavs._tcp, ... RFC 2782/' +
    '6186/6764), Active Directory locators (_ldap._tcp.dc._msdcs.<domain>, site and GUID forms), DKIM ' +
    '<selector>._domainkey (documented selectors, dated and SES tokens), _dmarc, _mta-sts, _acme-challenge, ' +
    "a company's mx/smtp/autodiscover hosts, hosted MX (Google, Zoho, iCloud, Proofpoint, Mimecast); " +
    'domains from email-providers',
  (r) => r.pick(SCHEMES)(r),
);
