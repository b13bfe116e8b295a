import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DecodeOutcome, LineDecoder } from '../../../src/sources/line-decoder.ts';
import { createZeekJsonDecoder } from '../../../src/sources/zeek/zeek-json.ts';
import { createZeekTsvDecoder, unescapeZeek } from '../../../src/sources/zeek/zeek-tsv.ts';

const fixture = (name: string) => new URL(`../../fixtures/sources/${name}`, import.meta.url);

function decodeFile(decoder: LineDecoder, name: string): DecodeOutcome[] {
  const lines = readFileSync(fixture(name), 'utf8').split('\n');
  let offset = 0;
  const out: DecodeOutcome[] = [];
  for (const line of lines) {
    if (line !== '') out.push(...decoder.decode(line, { file: 'f', offset }));
    offset += Buffer.byteLength(line) + 1;
  }
  return [...out, ...decoder.drain()];
}

const observations = (out: DecodeOutcome[]) =>
  out.flatMap((o) => (o.kind === 'observation' ? [o.observation] : []));
const malformed = (out: DecodeOutcome[]) => out.flatMap((o) => (o.kind === 'malformed' ? [o.reason] : []));

const EXAMPLE = {
  timeMicros: 1764583200123456,
  clientIp: '10.0.0.5',
  clientPort: 53124,
  serverIp: '10.0.0.53',
  serverPort: 53,
  queryName: 'example.com',
  queryType: 'A',
  responseCode: 'NOERROR',
  answerIps: ['93.184.216.34', '93.184.216.35'],
  answers: ['93.184.216.34', '93.184.216.35'],
  transport: 'udp',
};

test('Zeek TSV: every row of the fixture, field by field; bad rows named with a reason', () => {
  const out = decodeFile(createZeekTsvDecoder(undefined), 'zeek-dns.log');
  const rows = observations(out);
  assert.equal(rows.length, 6);
  assert.deepEqual(rows[0], EXAMPLE);
  assert.deepEqual(rows[1], {
    ...EXAMPLE,
    timeMicros: 1764583200500000,
    clientPort: 53125,
    queryName: 'xj3kq9zzp.example.org',
    responseCode: 'NXDOMAIN',
    answerIps: [],
    answers: [],
  });
  assert.deepEqual(rows[2], {
    ...EXAMPLE,
    timeMicros: 1764583201000001,
    clientIp: '10.0.1.7',
    clientPort: 40000,
    queryName: 'www.example.net',
    queryType: 'AAAA',
    answerIps: ['2001:db8::1'],
    answers: ['example.net', '2001:db8::1'],
    transport: 'tcp',
  });
  // No response seen: rcode and answers unset.
  assert.equal(rows[3]?.responseCode, undefined);
  assert.deepEqual(rows[3]?.answers, []);
  assert.equal(rows[3]?.queryType, 'TXT');
  // Escapes: a tab byte in the name, a comma inside one answer of the vector.
  assert.equal(rows[4]?.queryName, 'odd\tname.example.com');
  assert.deepEqual(rows[4]?.answers, ['v=spf1,~all', 'second']);
  // Unset responder, a type without a name.
  assert.equal(rows[5]?.serverIp, undefined);
  assert.equal(rows[5]?.queryType, 'TYPE65399');
  assert.deepEqual(malformed(out), [
    '7 columns where #fields names 24',
    'field "ts": not a Zeek time',
    'field "query": unset',
  ]);
  assert.equal(out.filter((o) => o.kind === 'ignored').length, 9, 'the 9 header lines');
});

test('Zeek TSV: the header saved with the position decodes a row after a restart; a new file forgets it', () => {
  const first = createZeekTsvDecoder(undefined);
  const text = readFileSync(fixture('zeek-dns.log'), 'utf8').split('\n');
  for (const line of text.slice(0, 8)) first.decode(line, { file: 'f', offset: 0 });
  const restarted = createZeekTsvDecoder(JSON.parse(JSON.stringify(first.save())));
  assert.deepEqual(observations(restarted.decode(text[8] ?? '', { file: 'f', offset: 1 })), [EXAMPLE]);
  restarted.startFile();
  assert.deepEqual(malformed(restarted.decode(text[8] ?? '', { file: 'g', offset: 0 })), [
    'a row before any #fields header',
  ]);
});

test('Zeek TSV: another separator and unset marker from the header are honoured', () => {
  const d = createZeekTsvDecoder(undefined);
  for (const line of [
    '#separator \\x7c',
    '#unset_field|NA',
    '#fields|ts|id.orig_h|query|qtype_name|rcode_name',
  ])
    d.decode(line, { file: 'f', offset: 0 });
  const [row] = observations(d.decode('1.5|10.1.1.1|a.example|A|NA', { file: 'f', offset: 9 }));
  assert.equal(row?.timeMicros, 1_500_000);
  assert.equal(row?.queryName, 'a.example');
  assert.equal(row?.responseCode, undefined);
  assert.equal(unescapeZeek('a\\\\b\\x41'), 'a\\bA');
});

test('Zeek JSON: epoch and ISO times, missing fields, bad lines', () => {
  const out = decodeFile(createZeekJsonDecoder(), 'zeek-dns.json');
  const rows = observations(out);
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[0], EXAMPLE);
  assert.equal(rows[1]?.responseCode, 'NXDOMAIN');
  assert.deepEqual(rows[1]?.answers, []);
  assert.equal(rows[2]?.timeMicros, Date.UTC(2025, 11, 1, 10, 0, 1) * 1000 + 1);
  assert.equal(rows[2]?.clientIp, 'fd00::7');
  assert.deepEqual(rows[2]?.answerIps, ['2001:db8::1']);
  assert.equal(rows[3]?.responseCode, undefined);
  assert.deepEqual(malformed(out), ['not JSON', 'field "query": unset', 'not a JSON object']);
});
