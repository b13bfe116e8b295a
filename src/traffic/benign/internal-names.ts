import type { Random } from '../random.ts';
import { company } from './domains.ts';
import { BASE36, HEX, SERVICE_WORDS, chars, ipv4, resourceName } from './labels.ts';
import { patternSource } from './source.ts';

const NAMESPACES = [
  'default',
  'kube-system',
  'monitoring',
  'ingress-nginx',
  'cert-manager',
  'prod',
  'staging',
  'payments',
  'istio-system',
  'argocd',
  'logging',
  'data',
];
const SYSTEM_SERVICES = [
  'kubernetes.default',
  'kube-dns.kube-system',
  'metrics-server.kube-system',
  'prometheus-server.monitoring',
  'grafana.monitoring',
  'alertmanager-operated.monitoring',
  'ingress-nginx-controller.ingress-nginx',
  'cert-manager-webhook.cert-manager',
  'istiod.istio-system',
  'argocd-server.argocd',
  'loki.logging',
  'elasticsearch-master.logging',
  'redis-master.data',
  'postgresql.data',
  'kafka-headless.data',
];
const svc = (r: Random): string => resourceName(r, company(r).name, 30);

const SCHEMES: ((r: Random) => string)[] = [
  // Kubernetes DNS spec: `<service>.<namespace>.svc.cluster.local`, pods of StatefulSets
  // `<set>-<n>.<headless service>.<namespace>.svc.cluster.local`, pod A records `<ip dashes>.<ns>.pod.cluster.local`.
  (r) => `${r.pick(SYSTEM_SERVICES)}.svc.cluster.local`,
  (r) => `${svc(r)}.${r.pick(NAMESPACES)}.svc.cluster.local`,
  (r) => {
    const set = r.pick([
      'redis',
      'kafka',
      'zookeeper',
      'postgres',
      'mongodb',
      'elasticsearch',
      'etcd',
      'rabbitmq',
      'cassandra',
    ]);
    return `${set}-${r.int(0, 5)}.${set}-headless.${r.pick(NAMESPACES)}.svc.cluster.local`;
  },
  (r) => `${ipv4(r, [10, 172, 192]).join('-')}.${r.pick(NAMESPACES)}.pod.cluster.local`,
  // Search-path expansions that resolvers try before the absolute name (ndots:5): `<name>.<ns>.svc.cluster.local`.
  (r) =>
    `${r.pick(['www.google.com', 'api.github.com', 'sts.amazonaws.com', 'login.microsoftonline.com'])}.${r.pick(NAMESPACES)}.svc.cluster.local`,
  // Consul `<service>.service.<dc>.consul`, Docker Compose/Swarm `tasks.<service>` is single-label (skipped).
  (r) => `${r.pick(SERVICE_WORDS)}.service.${r.pick(['dc1', 'dc2', 'us-east', 'eu-west', 'consul'])}.consul`,
  // Corporate machines: `<site>-<role><nn>.corp.<domain>`, laptops `<DESKTOP|LAPTOP>-<7 base36>` in AD.
  (r) =>
    `${r.pick(['nyc', 'lon', 'fra', 'ber', 'sfo', 'sea', 'tok', 'sgp', 'ams', 'par', 'hq', 'dc1', 'dc2'])}-${r.pick(['dc', 'fs', 'sql', 'web', 'app', 'exch', 'print', 'vpn', 'fw', 'sw', 'esx', 'k8s', 'db', 'srv'])}${String(r.int(1, 40)).padStart(2, '0')}.${r.pick(['corp', 'ad', 'int', 'lan', 'office'])}.${company(r).domain}`,
  (r) =>
    `${r.pick(['desktop', 'laptop'])}-${chars(r, BASE36, 7)}.${r.pick(['corp', 'ad', 'int'])}.${company(r).domain}`,
  // Windows probes of the local domain: `wpad.<domain>`, `isatap.<domain>`; Kerberos realms `kdc.<domain>`.
  (r) =>
    `${r.pick(['wpad', 'isatap', 'kdc', 'ntp', 'time', 'proxy', 'pac', 'sccm', 'wsus', 'ldap', 'radius'])}.${r.pick(['corp', 'ad', 'int', 'lan'])}.${company(r).domain}`,
  // mDNS / home network names: `<device>-<6 hex>.local`, `<name>.fritz.box`, `<name>.home.arpa` (RFC 8375).
  (r) =>
    `${r.pick(['android', 'iphone', 'ipad', 'macbook-pro', 'chromecast', 'brw', 'hp', 'epson', 'sonos', 'shelly1', 'esp', 'tasmota'])}-${chars(r, HEX, 6)}.${r.pick(['local', 'fritz.box', 'home.arpa', 'lan'])}`,
];

export const internalNames = patternSource(
  'internal-names',
  'Names resolved inside networks: Kubernetes DNS (<svc>.<ns>.svc.cluster.local, StatefulSet pods, pod A ' +
    'records, ndots search-path expansions), Consul, AD/corporate hosts (<site>-<role><nn>.corp.<domain>, ' +
    'DESKTOP-<7 base36>), wpad/isatap probes, mDNS and home-router names (.local, fritz.box, home.arpa)',
  (r) => r.pick(SCHEMES)(r),
);
