import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'tldts';
import { DGA_FAMILIES } from '../../../src/traffic/dga-families.ts';
import { formatTs, generateTraffic, type TrafficOptions } from '../../../src/traffic/generator.ts';
import { seededRandom, zipfSampler } from '../../../src/traffic/random.ts';

const options: TrafficOptions = {
  seed: 42,
  rate: 100,
  durationSeconds: 60,
  hosts: 24,
  startMs: Date.UTC(2026, 10, 30),
};
const all = (o: TrafficOptions) => [...generateTraffic(o).lines()];
// The collector's shipped domain_name pattern (lookarounds checked by the JS engine here).
const DOMAIN = /^(?=.{1,253}$)((?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+[A-Za-z]{2,63}$/;

test('the same options give the same lines and the same truth; another seed gives others', () => {
  const a = generateTraffic(options);
  const b = generateTraffic(options);
  assert.deepEqual(b.truth, a.truth);
  const lines = [...a.lines()];
  assert.deepEqual([...b.lines()], lines);
  assert.deepEqual([...a.lines()], lines, 'lines() starts over');
  assert.notDeepEqual(all({ ...options, seed: 43 }).slice(0, 50), lines.slice(0, 50));
});

test('every DGA family is a pure function of seed, day and index', () => {
  for (const family of DGA_FAMILIES) {
    assert.equal(family.domain(7, 20_000, 3), family.domain(7, 20_000, 3), family.name);
    assert.notEqual(family.domain(7, 20_000, 3), family.domain(8, 20_000, 3), family.name);
    assert.match(family.domain(7, 20_000, 3), DOMAIN, family.name);
  }
});

test('lines are in time order, in the collector format, near the requested rate', () => {
  const lines = all(options);
  assert.ok(lines.length > 0.8 * 100 * 60 && lines.length < 1.5 * 100 * 60, `${lines.length} lines`);
  for (let i = 1; i < lines.length; i += 1) assert.ok((lines[i]?.atMs ?? 0) >= (lines[i - 1]?.atMs ?? 0));
  for (const { line, atMs, srcIp } of lines) {
    const j = JSON.parse(line) as Record<string, string>;
    assert.deepEqual(Object.keys(j), [
      'ts',
      'status_code',
      'src_ip',
      'dns_server_ip',
      'domain_name',
      'record_type',
      'response_ip',
      'size',
    ]);
    assert.equal(j.ts, formatTs(atMs, 'heidgaf'));
    assert.match(j.ts ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(j.src_ip, srcIp);
    assert.match(j.domain_name ?? '', DOMAIN);
    assert.ok(['NOERROR', 'NXDOMAIN'].includes(j.status_code ?? ''));
    assert.ok(['A', 'AAAA'].includes(j.record_type ?? ''));
    assert.match(j.size ?? '', /^\d+b$/);
  }
});

test('the truth holds the infected hosts (one per family) and the tunnelling host, who behave so', () => {
  const t = generateTraffic(options);
  const special = t.truth.filter((h) => h.role !== 'benign');
  assert.deepEqual(
    special.filter((h) => h.role === 'dga').map((h) => h.role === 'dga' && h.family),
    ['conficker', 'necurs', 'suppobox', 'bamital'],
  );
  const tunnel = special.find((h) => h.role === 'tunnel');
  assert.ok(tunnel?.role === 'tunnel');
  const lines = [...t.lines()].map((l) => JSON.parse(l.line) as Record<string, string>);
  const byHost = (ip: string) => lines.filter((l) => l.src_ip === ip);
  for (const h of special) {
    if (h.role !== 'dga') continue;
    const nx = byHost(h.ip).filter((l) => l.status_code === 'NXDOMAIN').length;
    assert.ok(nx >= 15, `${h.family} host ${h.ip} resolved ${nx} NXDOMAIN names`);
  }
  const tunnelNames = byHost(tunnel.ip).filter((l) => parse(l.domain_name ?? '').domain === tunnel.domain);
  assert.ok(tunnelNames.length >= 60, `${tunnelNames.length} tunnel lookups in 60 s`);
  assert.ok(tunnelNames.every((l) => (parse(l.domain_name ?? '').subdomain ?? '').length >= 40));
  const benign = t.truth.filter((h) => h.role === 'benign').flatMap((h) => byHost(h.ip));
  const nxShare = benign.filter((l) => l.status_code === 'NXDOMAIN').length / benign.length;
  assert.ok(nxShare > 0.01 && nxShare < 0.06, `benign NXDOMAIN share ${nxShare}`);
});

test('the v2 format writes ts to the second, sizes without unit and no response_ip', () => {
  const [first] = all({ ...options, format: 'v2', durationSeconds: 1 });
  const j = JSON.parse(first?.line ?? '{}') as Record<string, string>;
  assert.match(j.ts ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  assert.match(j.size ?? '', /^\d+$/);
  assert.equal(Object.hasOwn(j, 'response_ip'), false);
});

test('zipf sampling favours the first ranks', () => {
  const sample = zipfSampler(100);
  const r = seededRandom(1);
  const counts = new Array<number>(100).fill(0);
  for (let i = 0; i < 20_000; i += 1) {
    const rank = sample(r);
    counts[rank] = (counts[rank] ?? 0) + 1;
  }
  assert.ok((counts[0] ?? 0) > 5 * (counts[50] ?? 0));
});

test("browser probes: benign hosts' random single labels, three at a time, all NXDOMAIN; off, nothing changes", () => {
  const plain = all(options);
  const o = { ...options, durationSeconds: 600, browserProbes: 30 };
  const lines = all(o).map((g) => ({
    srcIp: g.srcIp,
    ...(JSON.parse(g.line) as { domain_name?: string; status_code?: string }),
  }));
  const truth = generateTraffic(o).truth;
  const benign = new Set(truth.filter((h) => h.role === 'benign').map((h) => h.ip));
  // Bare single labels come from nothing else; a DGA or benign lookup always has a dot.
  const probes = lines.filter((l) => /^[a-z]{7,15}$/.test(l.domain_name ?? ''));
  // 30 an hour for 10 minutes: about 5 sets of three a host.
  assert.ok(probes.length > benign.size * 3 * 2, `${probes.length} probe lookups`);
  assert.equal(probes.length % 3, 0);
  assert.ok(probes.every((p) => benign.has(p.srcIp) && p.status_code === 'NXDOMAIN'));
  const suffixed = new Set(
    lines.map((l) => l.domain_name).filter((n) => /^[a-z]{7,15}\.corp\.example\.com$/.test(n ?? '')),
  );
  assert.ok(
    probes.some((p) => suffixed.has(`${p.domain_name}.corp.example.com`)),
    'some hosts append the search suffix',
  );
  assert.deepEqual(all({ ...options, browserProbes: 0 }), plain);
});
