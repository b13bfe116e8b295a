import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOMAIN_NAME_PATTERN, type LogField } from '../../../src/config/index.ts';
import {
  compileLineValidator,
  jsonDepth,
  REGEX_VERDICTS_KEPT,
  withinDepth,
  type LineVerdict,
} from '../../../src/stages/collector/line-validation.ts';
import { dnsLine, shippedConfig } from './fixtures.ts';

const collector = shippedConfig().pipeline.log_collection.collectors[0]!;
const fields = collector.required_log_information;
const validate = compileLineValidator(
  fields,
  { maxLineBytes: 2048, maxDepth: 8 },
  collector.optional_log_information,
);
const check = (line: string | Buffer): LineVerdict =>
  validate(typeof line === 'string' ? Buffer.from(line) : line);
const reason = (line: string | Buffer) => {
  const verdict = check(line);
  assert.equal(verdict.ok, false, `expected a failure for ${String(line)}`);
  return verdict.ok ? '' : verdict.reason;
};

test('a line matching every configured field is valid, with ts in microseconds and extra fields kept', () => {
  const verdict = check(dnsLine({ ts: '2026-11-30T00:00:01.25Z', extra: { nested: [1] } }));
  assert.ok(verdict.ok);
  assert.equal(verdict.tsMicros, Date.parse('2026-11-30T00:00:01Z') * 1000 + 250000);
  assert.equal(verdict.srcIp, '10.2.54.7');
  assert.deepEqual(verdict.fields.extra, { nested: [1] });
});

test('Timestamp: a value in none of the formats fails with the formats named', () => {
  assert.equal(
    reason(dnsLine({ ts: '2026-11-30 00:00:00' })),
    'field "ts": "2026-11-30 00:00:00" does not match any of the formats "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%S"',
  );
});

test('Timestamp: with several formats the first that parses gives the time', () => {
  const second = check(dnsLine({ ts: '2026-11-30T00:00:01' }));
  assert.ok(second.ok);
  assert.equal(second.tsMicros, Date.parse('2026-11-30T00:00:01Z') * 1000);
  const one: LogField[] = [
    { name: 'ts', type: 'Timestamp', format: '%Y-%m-%dT%H:%M:%S' },
    { name: 'src_ip', type: 'IpAddress' },
  ];
  const run = compileLineValidator(one, { maxLineBytes: 2048, maxDepth: 8 });
  const verdict = run(Buffer.from(JSON.stringify({ ts: '2026-11-30T00:00:01.5Z', src_ip: '10.0.0.1' })));
  assert.equal(verdict.ok, false);
  assert.match(verdict.ok ? '' : verdict.reason, /does not match the format "%Y-%m-%dT%H:%M:%S"$/);
});

test('a HAMSTRING v2.0.0 line (ts to the second, size without unit, no response_ip) is valid', () => {
  const line = JSON.stringify({
    ts: '2026-11-30T00:00:00',
    status_code: 'NOERROR',
    src_ip: '10.2.54.7',
    dns_server_ip: '192.168.2.53',
    domain_name: 'photopixel.org',
    record_type: 'AAAA',
    size: '331',
  });
  assert.ok(check(line).ok);
});

test('optional fields: absent passes, present must be valid', () => {
  assert.ok(check(dnsLine({ response_ip: undefined })).ok);
  assert.equal(reason(dnsLine({ response_ip: 7 })), 'field "response_ip": expected a string, got number');
});

test('IpAddress: IPv4 and IPv6 pass, anything else fails', () => {
  assert.ok(check(dnsLine({ src_ip: '2001:db8::7' })).ok);
  assert.equal(
    reason(dnsLine({ src_ip: '10.2.54' })),
    'field "src_ip": "10.2.54" is not an IPv4 or IPv6 address',
  );
  assert.equal(
    reason(dnsLine({ response_ip: 'localhost' })),
    'field "response_ip": "localhost" is not an IPv4 or IPv6 address',
  );
});

test('RegEx: the shipped domain pattern accepts names and refuses leading or trailing hyphens', () => {
  assert.ok(check(dnsLine({ domain_name: 'a-b.c0.example.org' })).ok);
  assert.match(
    reason(dnsLine({ domain_name: '-ab.org' })),
    /^field "domain_name": "-ab.org" does not match /,
  );
  assert.match(reason(dnsLine({ domain_name: 'ab-.org' })), /does not match/);
  assert.match(reason(dnsLine({ size: '331kb' })), /^field "size": "331kb" does not match \^\\d\+b\?\$$/);
});

test('RegEx: a value seen before gets the same verdict, kept or aged out of the kept verdicts', () => {
  const run = compileLineValidator(fields, { maxLineBytes: 2048, maxDepth: 8 });
  const verdictOf = (domain: string) => {
    const verdict = run(Buffer.from(dnsLine({ domain_name: domain })));
    return verdict.ok ? 'ok' : verdict.reason;
  };
  const bad = verdictOf('-ab.org');
  assert.match(bad, /^field "domain_name": "-ab.org" does not match /);
  assert.equal(verdictOf('ab.org'), 'ok');
  // Two generations of new values age both out: every verdict is still the pattern's.
  for (let i = 0; i <= 2 * REGEX_VERDICTS_KEPT; i += 1) assert.equal(verdictOf(`n${i}.example.org`), 'ok');
  assert.equal(verdictOf('-ab.org'), bad);
  assert.equal(verdictOf('-ab.org'), bad, 'kept again, the same reason');
  assert.equal(verdictOf('ab.org'), 'ok');
  assert.match(verdictOf('x-.example.org'), /does not match/);
});

test('RegEx: a value longer than the maximum length fails before matching', () => {
  const long = `${'a'.repeat(60)}.`.repeat(5) + 'org';
  assert.equal(
    reason(dnsLine({ domain_name: long })),
    `field "domain_name": ${long.length} characters, more than 253`,
  );
});

test('RegEx: a catastrophic-backtracking pattern simply does not match a hostile value', () => {
  const hostile: LogField[] = [
    { name: 'ts', type: 'Timestamp', format: '%Y' },
    { name: 'src_ip', type: 'IpAddress' },
    { name: 'user', type: 'RegEx', pattern: '^(a+)+$' },
  ];
  const run = compileLineValidator(hostile, { maxLineBytes: 100_000, maxDepth: 8 });
  const verdict = run(
    Buffer.from(JSON.stringify({ ts: '2026', src_ip: '10.0.0.1', user: `${'a'.repeat(50_000)}!` })),
  );
  assert.equal(verdict.ok, false);
});

test('ListItem: a value outside the allowed list fails', () => {
  assert.equal(
    reason(dnsLine({ record_type: 'SOA' })),
    'field "record_type": "SOA" is not one of ["A","AAAA","TXT","CNAME","MX","NULL"]',
  );
});

test('a missing configured field fails, the timestamp included', () => {
  assert.equal(reason(dnsLine({ ts: undefined })), 'missing field "ts"');
  assert.equal(reason(dnsLine({ size: undefined })), 'missing field "size"');
});

test('a configured field that is not a string fails', () => {
  assert.equal(reason(dnsLine({ size: 331 })), 'field "size": expected a string, got number');
  assert.equal(reason(dnsLine({ src_ip: null })), 'field "src_ip": expected a string, got null');
});

test('hostile input: too long, invalid UTF-8, too deep, not JSON, not an object, empty', () => {
  assert.equal(reason('x'.repeat(2049)), 'line of 2049 bytes exceeds max_line_bytes (2048)');
  assert.equal(reason(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 'not valid UTF-8');
  assert.equal(reason(`${'['.repeat(9)}${']'.repeat(9)}`), 'JSON nested deeper than 8 levels');
  assert.match(reason('{"ts": '), /^not JSON \(/);
  assert.equal(reason('[1,2]'), 'not a JSON object');
  assert.equal(reason('"text"'), 'not a JSON object');
  assert.equal(reason(''), 'empty line');
  assert.equal(validate(null).ok, false);
});

test('the depth scan ignores brackets inside strings and escaped quotes', () => {
  assert.equal(jsonDepth('{"a": "[[[[\\"{{{"}'), 1);
  assert.equal(jsonDepth('{"a": [{"b": []}]}'), 4);
  assert.equal(jsonDepth('42'), 0);
});

test('the bracket count decides only when it proves the depth; otherwise the scan does', () => {
  const texts = [
    '{"a": 1}',
    '{"a": "[[[[{{{{"}',
    '{"a": [{"b": []}]}',
    '[[[[[[[[[]]]]]]]]]',
    '{"a": [1, [2, [3]]], "b": {"c": {}}}',
    '{"a": "{{{{{{{{{{"}',
    'no json [',
  ];
  for (const text of texts)
    for (const max of [0, 1, 2, 3, 4, 8])
      assert.equal(withinDepth(text, max), jsonDepth(text) <= max, `${text} within ${max}`);
});

test('RegEx: the shipped domain pattern accepts punycode (IDN) labels and top-level labels', () => {
  for (const name of [
    'xn--80ak6aa92e.xn--p1ai',
    'mail.xn--mnchen-3ya.de',
    'xn--80ak6aa92e.com',
    'WWW.XN--P1AI',
    `a.xn--${'a'.repeat(59)}`, // a top-level label of exactly 63 characters
  ])
    assert.ok(check(dnsLine({ domain_name: name })).ok, name);
});

test('RegEx: the shipped domain pattern refuses bad labels, IDN or not', () => {
  for (const name of [
    '-xn--p1ai.ru', // label starting with a hyphen
    'xn--mnchen-3ya-.de', // label ending with a hyphen
    'example.xn--p1ai-', // top-level label ending with a hyphen
    'example.xn--', // "xn--" with nothing after it
    'a..xn--p1ai', // empty label
    '.example.com',
    'example.com.', // empty last label
    `${'a'.repeat(64)}.com`, // label over 63 characters
    `a.xn--${'a'.repeat(60)}`, // top-level label of 64 characters
    'example.c0m', // a letters-only top-level label with a digit
    'example', // no top-level label at all
  ])
    assert.match(reason(dnsLine({ domain_name: name })), /does not match/, name);
});

test('the shipped config and DOMAIN_NAME_PATTERN hold the same domain pattern', () => {
  const domain = fields.find((f) => f.name === 'domain_name');
  assert.equal(domain?.type === 'RegEx' ? domain.pattern : undefined, DOMAIN_NAME_PATTERN);
});
