import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'tldts';
import { ALL_STYLES, BENIGN_STYLES, TUNNEL_STYLES, queryLine } from '../../../src/traffic/tunnel/index.ts';
import { base32, encodeBits, hex, labels } from '../../../src/traffic/tunnel/encoding.ts';

const session = (seed: number, queries = 120) => ({
  seed,
  host: '10.1.2.3',
  startMs: Date.UTC(2026, 0, 5),
  queries,
});
// The collector's shipped domain_name pattern (lookarounds checked by the JS engine here).
const COLLECTOR_DOMAIN = /^(?=.{1,253}$)((?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+[A-Za-z]{2,63}$/;
// DNS names in general: service labels (`_ipp._tcp`) may hold underscores.
const DNS_NAME = /^(?=.{1,253}$)([A-Za-z0-9_-]{1,63}\.)+[A-Za-z]{2,63}$/;

test('every style is deterministic: the same options give the same queries, another seed others', () => {
  for (const style of ALL_STYLES) {
    const a = style.session(session(7));
    assert.deepEqual(style.session(session(7)), a, style.name);
    assert.notDeepEqual(style.session(session(8)), a, style.name);
    assert.equal(a.length, 120, style.name);
  }
});

test('tunnel names are valid for the shipped collector and stay under one registrable domain', () => {
  for (const style of TUNNEL_STYLES)
    for (const seed of [1, 2, 3]) {
      const queries = style.session(session(seed, 200));
      const domains = new Set(queries.map((q) => parse(q.name).domain));
      assert.equal(domains.size, 1, `${style.name}: ${[...domains].join(', ')}`);
      for (const q of queries) {
        assert.match(q.name, COLLECTOR_DOMAIN, `${style.name}: ${q.name}`);
        assert.equal(q.host, '10.1.2.3');
      }
    }
});

test('benign names are valid DNS names; each session is one host and one service', () => {
  for (const style of BENIGN_STYLES) {
    const queries = style.session(session(4, 200));
    for (const q of queries) assert.match(q.name, DNS_NAME, `${style.name}: ${q.name}`);
    const domains = new Set(queries.map((q) => parse(q.name).domain));
    assert.ok(domains.size <= 4, `${style.name}: ${[...domains].join(', ')}`);
  }
});

test('queries come in time order with the style kind and a description', () => {
  for (const style of ALL_STYLES) {
    const queries = style.session(session(5));
    queries.forEach((q, i) => assert.ok(i === 0 || q.atMs >= (queries[i - 1]?.atMs ?? 0), style.name));
    assert.ok(style.description.length > 20, style.name);
    assert.ok(style.kind === 'tunnel' || style.kind === 'benign');
  }
  const line = queryLine(TUNNEL_STYLES[0]!.session(session(1, 1))[0]!);
  assert.match(line, /^2026-01-05T00:00:00\.000Z\t10\.1\.2\.3\t\S+\t(NULL|TXT|CNAME|MX)\tNOERROR$/);
});

test('encodings: base32, hex, base-2^k and labels of at most 63 characters', () => {
  const bytes = new TextEncoder().encode('foobar');
  assert.equal(base32(bytes), 'mzxw6ytboi'); // RFC 4648 test vector, lower case, no padding
  assert.equal(hex(new Uint8Array([0, 15, 255])), '000fff');
  assert.equal(encodeBits(new Uint8Array([0xff]), '01'), '11111111');
  const long = labels('a'.repeat(130));
  assert.deepEqual(
    long.split('.').map((l) => l.length),
    [63, 63, 4],
  );
  assert.equal(labels('-ab-'), 'aabz', 'no hyphen at either end of a label');
});
