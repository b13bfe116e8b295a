import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DecodeOutcome, LineDecoder } from '../../../src/sources/line-decoder.ts';
import { createEveDecoder } from '../../../src/sources/suricata/eve-decoder.ts';

const lines = (name: string) =>
  readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l !== '');

function decodeAll(decoder: LineDecoder, text: readonly string[]): DecodeOutcome[] {
  const out: DecodeOutcome[] = [];
  text.forEach((line, i) => out.push(...decoder.decode(line, { file: 'f', offset: i })));
  return [...out, ...decoder.drain()];
}
const observations = (out: DecodeOutcome[]) =>
  out.flatMap((o) => (o.kind === 'observation' ? [{ at: o.origin.offset, ...o.observation }] : []));
const malformed = (out: DecodeOutcome[]) =>
  out.flatMap((o) => (o.kind === 'malformed' ? [[o.origin.offset, o.reason]] : []));

const EXAMPLE = {
  timeMicros: Date.UTC(2025, 11, 1, 10, 0, 0, 100) * 1000,
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

test('EVE v1: per-record answers merged and paired with their query; one observation per transaction', () => {
  const decoder = createEveDecoder(undefined);
  const out = decodeAll(decoder, lines('suricata-eve-v1.json'));
  const rows = observations(out);
  assert.deepEqual(rows[0], { at: 1, ...EXAMPLE });
  assert.deepEqual(rows[1], {
    ...EXAMPLE,
    at: 5,
    timeMicros: EXAMPLE.timeMicros + 400_000,
    clientPort: 53125,
    queryName: 'xj3kq9zzp.example.org',
    responseCode: 'NXDOMAIN',
    answerIps: [],
    answers: [],
  });
  // A CNAME then an AAAA record: the query's type, both records, the address.
  assert.deepEqual(rows[2], {
    ...EXAMPLE,
    at: 7,
    timeMicros: Date.UTC(2025, 11, 1, 10, 0, 1) * 1000 + 1,
    clientIp: '10.0.1.7',
    clientPort: 40000,
    queryName: 'www.example.net',
    queryType: 'AAAA',
    answerIps: ['2001:db8::1'],
    answers: ['example.net', '2001:db8::1'],
    transport: 'tcp',
  });
  // An answer without its query: the client is the side that is not port 53.
  assert.deepEqual(rows[3], {
    at: 10,
    timeMicros: Date.UTC(2025, 11, 1, 10, 0, 2) * 1000,
    clientIp: '10.0.0.20',
    clientPort: 6000,
    serverIp: '10.0.0.53',
    serverPort: 53,
    queryName: 'orphan.example.com',
    queryType: 'A',
    responseCode: 'NOERROR',
    answerIps: ['192.0.2.1'],
    answers: ['192.0.2.1'],
    transport: 'udp',
  });
  assert.equal(rows.length, 4);
  assert.deepEqual(malformed(out), [
    [9, 'not JSON'],
    [12, 'a DNS query event without "rrname" and "rrtype"'],
  ]);
  assert.equal(decoder.pending, 1, 'timeout.example.com still waits for its answer');
});

test('EVE v2 detailed and grouped, and v3 request/response', () => {
  const out = decodeAll(createEveDecoder(undefined), lines('suricata-eve-v2.json'));
  const rows = observations(out);
  assert.deepEqual(rows[0], { at: 1, ...EXAMPLE });
  assert.equal(rows[1]?.responseCode, 'NXDOMAIN');
  assert.equal(rows[1]?.queryName, 'xj3kq9zzp.example.org');
  assert.deepEqual(rows[2], {
    at: 4,
    timeMicros: Date.UTC(2025, 11, 1, 10, 0, 1) * 1000 + 2001,
    clientIp: '10.0.1.7',
    clientPort: 40000,
    serverIp: '10.0.0.53',
    serverPort: 53,
    queryName: 'www.example.net',
    queryType: 'AAAA',
    responseCode: 'NOERROR',
    answerIps: ['2001:db8::1'],
    answers: ['example.net', '2001:db8::1'],
    transport: 'tcp',
  });
  assert.deepEqual(
    [rows[3]?.at, rows[3]?.clientIp, rows[3]?.queryName, rows[3]?.answerIps, rows[3]?.timeMicros],
    [7, '10.0.0.22', 'v3.example.com', ['192.0.2.9'], Date.UTC(2025, 11, 1, 10, 0, 2) * 1000],
  );
  assert.equal(rows.length, 4);
  assert.deepEqual(malformed(out), [
    [5, 'field "dns.answers": not an array'],
    [8, 'not JSON'],
  ]);
});

test('pairing memory is bounded: a query leaves unanswered after the window or when memory is full, counted', () => {
  const query = (id: number, second: number) =>
    JSON.stringify({
      timestamp: `2025-12-01T10:00:${String(second).padStart(2, '0')}.000000+0000`,
      flow_id: id,
      event_type: 'dns',
      src_ip: '10.0.0.1',
      src_port: 1000 + id,
      dest_ip: '10.0.0.53',
      dest_port: 53,
      proto: 'UDP',
      dns: { type: 'query', id, rrname: `q${id}.example`, rrtype: 'A' },
    });
  const decoder = createEveDecoder(undefined, { maxPending: 2, pairWindowMicros: 10_000_000 });
  const out = decodeAll(decoder, [query(1, 0), query(2, 1), query(3, 2), query(4, 30)]);
  const rows = observations(out);
  // q1 leaves when q3 overfills the memory; q2 and q3 when q4 is 28 s later than them.
  assert.deepEqual(
    rows.map((r) => [r.at, r.queryName, r.responseCode]),
    [
      [0, 'q1.example', undefined],
      [1, 'q2.example', undefined],
      [2, 'q3.example', undefined],
    ],
  );
  assert.equal(decoder.unanswered, 3);
  assert.equal(decoder.pending, 1);
  // The memory survives a restart through save().
  const restarted = createEveDecoder(JSON.parse(JSON.stringify(decoder.save())));
  assert.equal(restarted.pending, 1);
  assert.equal(restarted.unanswered, 3);
});

test('v1 answers split across two reads are merged after a restart from the saved memory', () => {
  const text = lines('suricata-eve-v1.json');
  const first = createEveDecoder(undefined);
  const out1 = [
    first.decode(text[0] ?? '', { file: 'f', offset: 0 }),
    first.decode(text[1] ?? '', { file: 'f', offset: 1 }),
  ].flat();
  assert.deepEqual(observations(out1), []);
  const second = createEveDecoder(JSON.parse(JSON.stringify(first.save())));
  const out2 = [...second.decode(text[2] ?? '', { file: 'f', offset: 2 }), ...second.drain()];
  assert.deepEqual(observations(out2), [{ at: 1, ...EXAMPLE }]);
});
