import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';
import { DEFAULT_LOG_LINE_MAPPING, formatTimestamp, toLogLine } from '../../../src/sources/log-line.ts';

const answered: DnsObservation = {
  timeMicros: Date.UTC(2026, 11, 1, 9, 5, 7) * 1000 + 123_456,
  clientIp: '127.0.0.21',
  serverIp: '127.0.0.1',
  queryName: 'www.example.org',
  queryType: 'A',
  responseCode: 'NOERROR',
  answerIps: ['192.0.2.7', '192.0.2.8'],
  answers: ['192.0.2.7', '192.0.2.8'],
  responseSize: 331,
};

test('the default mapping writes the shipped collector configuration’s keys and formats', () => {
  assert.deepEqual(JSON.parse(toLogLine(answered, DEFAULT_LOG_LINE_MAPPING)), {
    ts: '2026-12-01T09:05:07.123456Z',
    status_code: 'NOERROR',
    src_ip: '127.0.0.21',
    dns_server_ip: '127.0.0.1',
    domain_name: 'www.example.org',
    record_type: 'A',
    response_ip: '192.0.2.7',
    size: '331b',
  });
});

test('an NXDOMAIN answer gets the unspecified address of its family; an unanswered query none', () => {
  const nx = { ...answered, queryType: 'AAAA', responseCode: 'NXDOMAIN', answerIps: [], answers: [] };
  const nxLine = JSON.parse(toLogLine(nx, DEFAULT_LOG_LINE_MAPPING)) as Record<string, string>;
  assert.equal(nxLine.response_ip, '::');
  const unanswered = {
    ...answered,
    responseCode: undefined,
    answerIps: [],
    answers: [],
    responseSize: undefined,
  };
  const line = JSON.parse(toLogLine(unanswered, DEFAULT_LOG_LINE_MAPPING)) as Record<string, string>;
  assert.equal('response_ip' in line, false);
  assert.equal('size' in line, false);
  assert.equal('status_code' in line, false);
});

test('a configured mapping renames keys, formats the time and fills a missing field', () => {
  const mapping = {
    time: { from: 'timestamp', format: '%Y-%m-%d %H:%M:%S' },
    client: { from: 'client_ip' },
    rcode: { from: 'response_code', missing: 'NONE' },
    ips: { from: 'answer_ips' },
  } as const;
  const unanswered = { ...answered, responseCode: undefined };
  assert.deepEqual(JSON.parse(toLogLine(unanswered, mapping)), {
    time: '2026-12-01 09:05:07',
    client: '127.0.0.21',
    rcode: 'NONE',
    ips: '192.0.2.7,192.0.2.8',
  });
});

test('formatTimestamp: epoch seconds, zone directives and a literal percent', () => {
  assert.equal(formatTimestamp(1_500_000_000_250_000, '%s %z %Z %%'), '1500000000 +0000 UTC %');
  assert.equal(formatTimestamp(1_500_000_000_250_000, '%S.%f'), '00.250000');
});
