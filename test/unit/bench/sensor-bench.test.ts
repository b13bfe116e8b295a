import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePass, dnstapWorkload } from '../../../bench/sensor-workload.ts';

// The benchmark's decode passes on a small workload: they count what they claim (no timing here).
test('bench:sensor decode passes: every frame decoded, one line per transaction', () => {
  const { stream, payloads } = dnstapWorkload(2_000);
  assert.equal(payloads.length, 4_000);
  const decode = decodePass(stream, false);
  assert.equal(decode.frames, 4_000);
  assert.equal(decode.lines, 2_000);
  const withLines = decodePass(stream, true);
  assert.equal(withLines.lines, 2_000);
  assert.ok((withLines.lineBytes ?? 0) > 2_000 * 100, 'log lines were made');
});
