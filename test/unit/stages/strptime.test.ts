import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileStrptime } from '../../../src/stages/collector/strptime.ts';

const micros = (iso: string, extra = 0) => Date.parse(iso) * 1000 + extra;

test('the v2.0.0 format %Y-%m-%dT%H:%M:%S reads a naive time as UTC', () => {
  assert.equal(compileStrptime('%Y-%m-%dT%H:%M:%S')('2026-11-30T01:02:03'), micros('2026-11-30T01:02:03Z'));
});

test('%f reads one to six fraction digits as microseconds and a literal Z must be present', () => {
  const parse = compileStrptime('%Y-%m-%dT%H:%M:%S.%fZ');
  assert.equal(parse('2026-11-30T00:00:00.123456Z'), micros('2026-11-30T00:00:00Z', 123456));
  assert.equal(parse('2026-11-30T00:00:00.5Z'), micros('2026-11-30T00:00:00Z', 500000));
  assert.equal(parse('2026-11-30T00:00:00.5'), undefined);
  assert.equal(parse('2026-11-30T00:00:00.1234567Z'), undefined);
});

test('%z offsets (+HHMM, -HH:MM, Z) move the time to UTC', () => {
  const parse = compileStrptime('%Y-%m-%d %H:%M:%S%z');
  assert.equal(parse('2026-11-30 10:00:00+0200'), micros('2026-11-30T08:00:00Z'));
  assert.equal(parse('2026-11-30 10:00:00-05:30'), micros('2026-11-30T15:30:00Z'));
  assert.equal(parse('2026-11-30 10:00:00Z'), micros('2026-11-30T10:00:00Z'));
  assert.equal(parse('2026-11-30 10:00:00+2'), undefined);
});

test('month names, 12-hour clock and two-digit years follow Python', () => {
  assert.equal(
    compileStrptime('%d/%b/%Y:%I:%M:%S %p')('10/Oct/2000:01:55:36 PM'),
    micros('2000-10-10T13:55:36Z'),
  );
  assert.equal(compileStrptime('%B %d %y')('March 01 68'), micros('2068-03-01T00:00:00Z'));
  assert.equal(compileStrptime('%y')('69'), micros('1969-01-01T00:00:00Z'));
  assert.equal(compileStrptime('%Y %j')('2024 060'), micros('2024-02-29T00:00:00Z'));
});

test('impossible dates and out-of-range fields do not parse', () => {
  const parse = compileStrptime('%Y-%m-%d %H:%M:%S');
  assert.equal(parse('2026-02-29 00:00:00'), undefined);
  assert.equal(parse('2026-13-01 00:00:00'), undefined);
  assert.equal(parse('2026-01-01 24:00:00'), undefined);
  assert.equal(parse('2026-01-01 00:60:00'), undefined);
  assert.equal(parse('2026-01-01 00:00:00 trailing'), undefined);
  assert.equal(parse('26-01-01 00:00:00'), undefined);
});

test('%% is a literal percent sign and whitespace matches any run of whitespace', () => {
  assert.equal(compileStrptime('%Y%%%m  %d')('2026%11 30'), micros('2026-11-30T00:00:00Z'));
});
