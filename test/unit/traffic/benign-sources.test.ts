import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BENIGN_SOURCES, benignSource, isHostname } from '../../../src/traffic/benign/index.ts';

/** RFC 1123 labels; a label may start with one underscore (RFC 8552 attribute leaves: `_sip._tcp`, `_domainkey`). */
const HOSTNAME =
  /^(?=.{1,253}$)(?:_?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+_?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** An entry each real source must hold: proof that the names come from its package. */
const KNOWN: Record<string, readonly string[]> = {
  'top-sites': ['www.google.com', 'youtube.com', 'support.google.com'],
  'email-providers': ['gmail.com', 'yandex.ru', '163.com'],
  'adguard-trackers': ['smetrics.lowes.com', 'sdk-api-v1.singular.net'],
  'psl-private': [
    'github.io',
    'herokuapp.com',
    'blogspot.com',
    'duckdns.org',
    'ddns.net',
    'compute.amazonaws.com',
  ],
};

test('there are at least four real sources and the pattern sources, with unique names', () => {
  const names = BENIGN_SOURCES.map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
  assert.ok(BENIGN_SOURCES.filter((s) => s.origin === 'real').length >= 4);
  assert.ok(BENIGN_SOURCES.filter((s) => s.origin === 'pattern').length >= 5);
  for (const s of BENIGN_SOURCES) assert.ok(s.description.length > 40, `${s.name} describes itself`);
});

for (const source of BENIGN_SOURCES) {
  test(`${source.name}: distinct valid lower-case hostnames, deterministic for a seed`, () => {
    const names = source.names(42, 3000);
    assert.ok(names.length >= 400, `${names.length} names`);
    assert.equal(new Set(names).size, names.length, 'distinct');
    for (const n of names) {
      assert.ok(HOSTNAME.test(n), `valid hostname: ${n}`);
      assert.ok(isHostname(n));
      assert.equal(n, n.toLowerCase());
      assert.ok(!n.endsWith('.'));
    }
    assert.deepEqual(source.names(42, 3000), names, 'same seed, same names');
    assert.notDeepEqual(source.names(43, 50), names.slice(0, 50), 'another seed, other names');
    assert.equal(source.names(42, 10).length, 10);
    assert.deepEqual(source.names(42, 0), []);
  });
}

test('real sources give their whole list when count exceeds it, and hold known entries of their package', () => {
  for (const [name, entries] of Object.entries(KNOWN)) {
    const source = benignSource(name);
    assert.equal(source.origin, 'real');
    const all = source.names(1, 1e9);
    assert.deepEqual(new Set(source.names(2, 1e9)), new Set(all), `${name}: every seed, the same list`);
    for (const e of entries) assert.ok(all.includes(e), `${name} has ${e}`);
  }
  // A seeded sample is a prefix of a larger one from the same seed.
  const s = benignSource('email-providers');
  assert.deepEqual(s.names(5, 1000).slice(0, 100), s.names(5, 100));
});

test('pattern sources produce the documented shapes', () => {
  const cloud = benignSource('cloud-patterns').names(1, 5000);
  assert.ok(
    cloud.some((n) => /^a[0-9a-f]{31}-\d{9,10}\.[a-z0-9-]+\.elb\.amazonaws\.com$/.test(n)),
    'EKS ELB',
  );
  assert.ok(
    cloud.some((n) => /^\d{12}-[a-z0-9]{32}\.apps\.googleusercontent\.com$/.test(n)),
    'OAuth client id',
  );
  const cdn = benignSource('cdn-patterns').names(1, 5000);
  assert.ok(
    cdn.some((n) => /^d[a-z0-9]{13}\.cloudfront\.net$/.test(n)),
    'CloudFront',
  );
  assert.ok(
    cdn.some((n) => /^rr?\d+---sn-[a-z0-9-]{8,9}\.googlevideo\.com$/.test(n)),
    'googlevideo',
  );
  const ptr = benignSource('reverse-dns').names(1, 5000);
  assert.ok(ptr.some((n) => /^c-(\d{1,3}-){3}\d{1,3}\.hsd1\.[a-z]{2}\.comcast\.net$/.test(n)));
  assert.ok(ptr.some((n) => /^(\d{1,3}\.){4}in-addr\.arpa$/.test(n)));
  const srv = benignSource('service-records').names(1, 5000);
  assert.ok(srv.some((n) => n.startsWith('_ldap._tcp.dc._msdcs.')));
  assert.ok(srv.some((n) => n.startsWith('selector1._domainkey.')));
  assert.ok(
    benignSource('idn-names')
      .names(1, 500)
      .every((n) => n.split('.').some((l) => l.startsWith('xn--'))),
  );
  assert.ok(
    benignSource('internal-names')
      .names(1, 2000)
      .some((n) => n.endsWith('.svc.cluster.local')),
  );
  assert.ok(
    benignSource('vendor-services')
      .names(1, 500)
      .some((n) => /^\d\.pool\.ntp\.org$/.test(n)),
  );
});

test('benignSource throws for an unknown name, naming the known ones', () => {
  assert.throws(
    () => benignSource('nope'),
    (e: Error) => e.message.includes("'nope'") && BENIGN_SOURCES.every((s) => e.message.includes(s.name)),
  );
});
