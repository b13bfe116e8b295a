import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DnstapDecoder } from '../../../../src/sources/dnstap/dnstap-decoder.ts';
import { decodeDnstap, encodeDnstap } from '../../../../src/sources/dnstap/dnstap-schema.ts';
import { ipText } from '../../../../src/sources/ip-text.ts';
import { parseDns } from '../../../../src/sources/dns-message.ts';
import { DEFAULT_LOG_LINE_MAPPING, toLogLine } from '../../../../src/sources/log-line.ts';
import { clientPair, response, T0, v4 } from '../../../support/dnstap-frames.ts';

const NOW = 1_000_000;

test('a client response paired with its query becomes the shipped collector’s log line', () => {
  const d = new DnstapDecoder();
  const pair = clientPair('127.0.0.21', 40000, 7, 'www.Example.org', {
    answers: [
      { type: 'CNAME', name: 'www.Example.org', data: 'web.example.org' },
      { type: 'A', name: 'web.example.org', data: '192.0.2.7' },
    ],
  });
  assert.deepEqual(d.decode(pair.query, NOW), { kind: 'ignored' });
  assert.equal(d.waiting, 1);
  const r = d.decode(pair.response, NOW + 1);
  assert.equal(r.kind, 'observation');
  if (r.kind !== 'observation') return;
  assert.equal(r.identity, 'resolver-1');
  assert.deepEqual(r.observation, {
    timeMicros: T0,
    clientIp: '127.0.0.21',
    clientPort: 40000,
    serverIp: '127.0.0.1',
    serverPort: 53,
    queryName: 'www.Example.org',
    queryType: 'A',
    responseCode: 'NOERROR',
    answerIps: ['192.0.2.7'],
    answers: ['web.example.org', '192.0.2.7'],
    querySize: pair.queryBytes.length,
    responseSize: pair.responseBytes.length,
    transport: 'udp',
  });
  assert.deepEqual(JSON.parse(toLogLine(r.observation, DEFAULT_LOG_LINE_MAPPING)), {
    ts: '2026-12-01T09:05:07.123456Z',
    status_code: 'NOERROR',
    src_ip: '127.0.0.21',
    dns_server_ip: '127.0.0.1',
    domain_name: 'www.Example.org',
    record_type: 'A',
    response_ip: '192.0.2.7',
    size: `${pair.responseBytes.length}b`,
  });
  assert.equal(d.counters.paired, 1);
  assert.equal(d.waiting, 0);
});

test('NXDOMAIN, AAAA and TXT responses', () => {
  const d = new DnstapDecoder();
  const nx = d.decode(clientPair('127.0.0.2', 1, 1, 'x.invalid', { rcode: 'NXDOMAIN' }).response, NOW);
  assert.equal(nx.kind === 'observation' && nx.observation.responseCode, 'NXDOMAIN');
  assert.equal(
    nx.kind === 'observation' &&
      toLogLine(nx.observation, DEFAULT_LOG_LINE_MAPPING).includes('"response_ip":"0.0.0.0"'),
    true,
  );
  const aaaa = d.decode(
    clientPair('127.0.0.2', 1, 2, 'v6.test', {
      type: 'AAAA',
      answers: [{ type: 'AAAA', name: 'v6.test', data: '2001:db8::1' }],
    }).response,
    NOW,
  );
  assert.deepEqual(aaaa.kind === 'observation' && aaaa.observation.answerIps, ['2001:db8::1']);
  const txt = d.decode(
    clientPair('127.0.0.2', 1, 3, 't.test', {
      type: 'TXT',
      answers: [{ type: 'TXT', name: 't.test', data: ['hello ', 'world'] }],
    }).response,
    NOW,
  );
  assert.deepEqual(txt.kind === 'observation' && txt.observation.answers, ['hello world']);
  assert.equal(d.counters.unpaired, 3);
});

test('which message types give observations is configured; unobserved ones are ignored', () => {
  const pair = clientPair('127.0.0.3', 5, 9, 'a.test');
  const queries = new DnstapDecoder({ observe: ['CLIENT_QUERY'] });
  const q = queries.decode(pair.query, NOW);
  assert.equal(q.kind, 'observation');
  assert.equal(q.kind === 'observation' && q.observation.responseCode, undefined);
  assert.deepEqual(queries.decode(pair.response, NOW), { kind: 'ignored' });
  // Both observed: two observations, no pairing table used.
  const both = new DnstapDecoder({ observe: ['CLIENT_QUERY', 'CLIENT_RESPONSE'] });
  assert.equal(both.decode(pair.query, NOW).kind, 'observation');
  assert.equal(both.waiting, 0);
  assert.equal(both.decode(pair.response, NOW).kind, 'observation');
  // Resolver messages: the resolver is the client, the upstream server the server.
  const upstream = encodeDnstap({
    type: 'RESOLVER_RESPONSE',
    queryAddress: v4('10.0.0.53'),
    responseAddress: v4('192.0.2.1'),
    responseTimeMicros: T0,
    responseMessage: response(4, 'a.test'),
  });
  assert.deepEqual(new DnstapDecoder().decode(upstream, NOW), { kind: 'ignored' });
  const r = new DnstapDecoder({ observe: ['RESOLVER_RESPONSE'] }).decode(upstream, NOW);
  assert.equal(
    r.kind === 'observation' && `${r.observation.clientIp}>${r.observation.serverIp}`,
    '10.0.0.53>192.0.2.1',
  );
});

test('the pairing table is bounded: oldest evicted at capacity, old queries expire, both counted', () => {
  const d = new DnstapDecoder({ pairingCapacity: 2, pairingTimeoutMs: 100 });
  for (let id = 0; id < 3; id += 1) d.decode(clientPair('127.0.0.4', 1, id, 'a.test').query, NOW);
  assert.equal(d.waiting, 2);
  assert.equal(d.counters.evicted, 1);
  const evicted = d.decode(clientPair('127.0.0.4', 1, 0, 'a.test').response, NOW);
  assert.equal(evicted.kind, 'observation', 'a response whose query was evicted is still reported');
  assert.equal(d.counters.unpaired, 1);
  d.expire(NOW + 100);
  assert.equal(d.waiting, 0);
  assert.equal(d.counters.expired, 2);
});

test('hostile and truncated frames are malformed with a reason, never thrown', () => {
  const d = new DnstapDecoder({ observe: ['CLIENT_QUERY', 'CLIENT_RESPONSE'] });
  const reasons: string[] = [];
  const pair = clientPair('127.0.0.5', 1, 1, 'a.test', {
    answers: [{ type: 'A', name: 'a.test', data: '192.0.2.1' }],
  });
  const inputs: Uint8Array[] = [
    Buffer.from([0xff, 0xff, 0xff]),
    Buffer.alloc(0),
    Buffer.from('not protobuf at all, just text'),
    pair.response.subarray(0, pair.response.length - 5),
    encodeDnstap({
      type: 'CLIENT_RESPONSE',
      queryAddress: v4('127.0.0.5'),
      responseMessage: pair.responseBytes.subarray(0, 20),
    }),
    encodeDnstap({ type: 'CLIENT_RESPONSE', queryAddress: v4('127.0.0.5') }),
    encodeDnstap({
      type: 'CLIENT_RESPONSE',
      queryAddress: Uint8Array.from([1, 2]),
      responseMessage: pair.responseBytes,
    }),
    encodeDnstap({ type: 'CLIENT_QUERY', queryAddress: v4('127.0.0.5'), queryMessage: Buffer.alloc(12) }),
  ];
  for (let seed = 1; seed <= 200; seed += 1) {
    const bytes = Buffer.from(pair.response);
    for (let i = 0; i < 4; i += 1) bytes[(seed * 7919 * (i + 1)) % bytes.length] = (seed * 31 + i) & 0xff;
    inputs.push(bytes);
  }
  for (const input of inputs) {
    const r = d.decode(input, NOW);
    if (r.kind === 'malformed') reasons.push(r.unit.reason);
    assert.ok(r.kind !== 'malformed' || r.unit.excerpt !== undefined);
  }
  assert.ok(reasons.length >= 8, `${reasons.length} malformed`);
  assert.match(reasons[0] ?? '', /^protobuf: /);
  assert.ok(reasons.some((r) => /does not parse/.test(r)));
  assert.ok(reasons.some((r) => /without response_message/.test(r)));
  assert.ok(reasons.some((r) => /valid query_address/.test(r)));
  assert.ok(reasons.some((r) => /without a question/.test(r)));
});

test('unknown record types are kept as TYPE<n> and counted', () => {
  const d = new DnstapDecoder();
  const pair = clientPair('127.0.0.6', 1, 1, 'odd.test', {
    answers: [
      { type: 'UNKNOWN_65400' as 'A', name: 'odd.test', data: Buffer.from([1, 2, 3]) as unknown as string },
    ],
  });
  const r = d.decode(pair.response, NOW);
  assert.deepEqual(r.kind === 'observation' && r.observation.answers, ['TYPE65400']);
  assert.equal(d.counters.unknownRecordTypes, 1);
  assert.equal(parseDns(response(1, 'q.test', { type: 'UNKNOWN_65401' as 'A' })) !== undefined, true);
});

test('decodeDnstap keeps absent fields absent and converts times to microseconds', () => {
  const f = decodeDnstap(encodeDnstap({ type: 'CLIENT_QUERY', queryTimeMicros: T0 }));
  assert.ok(typeof f !== 'string');
  assert.equal(f.queryTimeMicros, T0);
  assert.equal(f.responseTimeMicros, undefined);
  assert.equal(f.queryPort, undefined);
});

test('addresses in their usual text form', () => {
  assert.equal(ipText(v4('192.0.2.255')), '192.0.2.255');
  const v6 = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
  assert.equal(ipText(v6('20010db8000000000000000000000001')), '2001:db8::1');
  assert.equal(ipText(v6('00000000000000000000000000000001')), '::1');
  assert.equal(ipText(v6('00000000000000000000000000000000')), '::');
  assert.equal(ipText(v6('20010db8000100000001000000000001')), '2001:db8:1:0:1::1');
  assert.equal(ipText(v6('00000000000000000000ffffc0000201')), '::ffff:192.0.2.1');
  assert.equal(ipText(Uint8Array.from([1, 2, 3])), undefined);
});
