import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'tldts';
import { DGA_FAMILIES, dgaFamily, type DgaFamily } from '../../../src/traffic/dga-families.ts';

const KINDS = ['arithmetic', 'hash', 'hex', 'alphanumeric', 'wordlist', 'permutation', 'pronounceable'];
const STRUCTURES = ['tld', 'parent', 'host-label'];
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function validName(name: string): boolean {
  return name.length <= 253 && name.split('.').length >= 2 && name.split('.').every((l) => LABEL.test(l));
}

/** The names of indexes 0..n-1 of one seed and day. */
function names(family: DgaFamily, n: number, seed = 7, day = 20_000): string[] {
  return Array.from({ length: n }, (_, i) => family.domain(seed, day, i));
}

const byKind = (kind: string) => DGA_FAMILIES.filter((f) => f.kind === kind);
const byStructure = (structure: string) => DGA_FAMILIES.filter((f) => f.structure === structure);

test('at least 30 families with distinct names, a known kind and structure, and a one-line description', () => {
  assert.ok(DGA_FAMILIES.length >= 30, `${DGA_FAMILIES.length} families`);
  assert.equal(new Set(DGA_FAMILIES.map((f) => f.name)).size, DGA_FAMILIES.length);
  for (const f of DGA_FAMILIES) {
    assert.ok(KINDS.includes(f.kind), `${f.name}: kind ${f.kind}`);
    assert.ok(STRUCTURES.includes(f.structure), `${f.name}: structure ${f.structure}`);
    assert.ok(f.description.length > 20 && !f.description.includes('\n'), `${f.name}: description`);
    assert.equal(dgaFamily(f.name), f);
  }
  assert.throws(() => dgaFamily('no-such-family'), RangeError);
});

test('the original eight come first, in order, and still produce exactly the same names', () => {
  const pinned: Record<string, [string, string, string]> = {
    conficker: ['exuqcr.info', 'relissy.net', 'sjftt.info'],
    necurs: ['ggtxcpqhgjxsidiopgsdk.kz', 'ywuiifqfohn.xxx', 'revngufknlkod.kz'],
    cryptolocker: ['hhdmndtpjwgfrjb.net', 'ybxfeqimdcyhgjp.org', 'gsikztcofglyve.biz'],
    bamital: [
      '1dc72c09d27412205cfea935cee11280.info',
      '6f1b639071e2557062ff57ee3a623402.cz.cc',
      'd999c2f5208732d889a87b9cf90fbf47.org',
    ],
    banjori: [
      'fcvxillocoarsensmatilyegky.com',
      'ykvwillocoarsensmatilyegky.com',
      'yabzedplaitingapercftk.com',
    ],
    suppobox: ['fixitcourbs.net', 'hockerfarded.net', 'gemmeryserfs.net'],
    matsnu: ['choreusshulsneederoakums.com', 'dunelandmoraysdudedould.com', 'vacances-waveys-campier.com'],
    simda: ['robiqaxu.com', 'kemohumohiv.com', 'jupipapi.com'],
  };
  const kinds = [
    'arithmetic',
    'hash',
    'arithmetic',
    'hex',
    'permutation',
    'wordlist',
    'wordlist',
    'pronounceable',
  ];
  assert.deepEqual(
    DGA_FAMILIES.slice(0, 8).map((f) => f.name),
    Object.keys(pinned),
  );
  DGA_FAMILIES.slice(0, 8).forEach((f, k) => {
    assert.equal(f.kind, kinds[k], f.name);
    assert.equal(f.structure, 'tld', f.name);
    const got = [f.domain(7, 20_000, 0), f.domain(7, 20_000, 3), f.domain(123_456, 20_455, 41)];
    assert.deepEqual(got, pinned[f.name], f.name);
  });
});

test('every name is a valid lower-case DNS name, deterministic, and depends on the seed', () => {
  for (const f of DGA_FAMILIES) {
    for (const [seed, day] of [
      [7, 20_000],
      [123_456, 19_000],
      [999_983, 20_455],
    ] as const) {
      for (let i = 0; i < 150; i += 1) {
        const name = f.domain(seed, day, i);
        assert.ok(validName(name), `${f.name}: ${name}`);
        assert.equal(f.domain(seed, day, i), name, `${f.name} is not deterministic`);
      }
    }
    assert.notEqual(f.domain(7, 20_000, 3), f.domain(8, 20_000, 3), `${f.name} ignores the seed`);
  }
});

test('each family gives at least 95 % distinct names over 1,000 indexes, and no two families share a name', () => {
  const owner = new Map<string, string>();
  for (const f of DGA_FAMILIES) {
    const list = names(f, 1000);
    const distinct = new Set(list);
    assert.ok(distinct.size >= 950, `${f.name}: ${distinct.size} distinct of 1000`);
    for (const name of distinct) {
      assert.equal(owner.get(name) ?? f.name, f.name, `${name} from ${f.name} and ${owner.get(name)}`);
      owner.set(name, f.name);
    }
  }
});

test('coverage: every structure, kind group and separator style is represented', () => {
  for (const structure of STRUCTURES)
    assert.ok(byStructure(structure).length >= 4, `${structure}: ${byStructure(structure).length}`);
  for (const kind of ['alphanumeric', 'wordlist', 'hash', 'hex'])
    assert.ok(byKind(kind).length >= 4, `${kind}: ${byKind(kind).length}`);
  assert.ok(byKind('arithmetic').length >= 10);
  assert.ok(byKind('pronounceable').length >= 3);
  assert.ok(DGA_FAMILIES.length - 8 >= 22, 'at least 22 new families');
  // Dictionary families joining words with a hyphen (or a dot) inside the registrable name.
  const separated = byKind('wordlist').filter((f) =>
    names(f, 200).some((n) => (parse(n).domainWithoutSuffix ?? '').includes('-')),
  );
  assert.ok(separated.length >= 2, `wordlist with separators: ${separated.map((f) => f.name).join(', ')}`);
});

test('structure matches the names: bare under a TLD, a customer label under a parent, or a host label in front', () => {
  for (const f of DGA_FAMILIES) {
    const parents = new Set<string>();
    for (const name of names(f, 200)) {
      const p = parse(name);
      // Bamital's co.cc and cz.cc were sold as second-level suffixes; tldts does not list them.
      const bare = p.subdomain === '' || ['co.cc', 'cz.cc'].includes(p.domain ?? '');
      if (f.structure === 'tld') assert.ok(bare, `${f.name}: ${name}`);
      else assert.ok(p.subdomain, `${f.name}: ${name} has nothing in front of ${p.domain}`);
      if (f.structure !== 'tld') parents.add(p.domain ?? '');
    }
    // A parent family's names all hang off a handful of fixed zones (ddns.net, duckdns.org, ...).
    if (f.structure === 'parent') assert.ok(parents.size <= 4, `${f.name}: ${[...parents].join(', ')}`);
  }
});

test('alphanumeric names mix letters and digits; hex names are hex; letter families have no digits', () => {
  const generated = (name: string) => parse(name).domainWithoutSuffix ?? '';
  const leftmost = (name: string) => name.split('.')[0] ?? '';
  for (const f of byKind('alphanumeric')) {
    const part = f.structure === 'tld' ? generated : leftmost;
    const list = names(f, 500).map(part);
    assert.ok(list.filter((l) => /\d/.test(l) && /[a-z]/.test(l)).length >= 100, `${f.name}: too few mixed`);
  }
  for (const f of byKind('hex').filter((x) => x.structure === 'tld'))
    for (const name of names(f, 200))
      assert.match(leftmost(name), /^[a-z]?[0-9a-f]{10,}$/, `${f.name}: ${name}`);
  for (const f of [...byKind('arithmetic'), ...byKind('pronounceable')])
    for (const name of names(f, 200)) assert.doesNotMatch(name, /\d/, `${f.name}: ${name}`);
});
