import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../../src/config/index.ts';
import { SHIPPED_CONFIG_PATH } from '../../config/helpers.ts';
import { compileLineValidator } from '../../../../src/stages/collector/line-validation.ts';
import {
  HOSTILE_KINDS,
  hostileMix,
  NEAR_LIMIT_BYTES,
  type HostileKind,
} from '../../../../src/verify/pipeline/hostile-lines.ts';
import { busyRate, reasonClass } from '../../../../src/verify/pipeline/hostile-run.ts';
import { lineIdOf } from '../../../../src/verify/pipeline/line-marks.ts';

const collector = loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} }).pipeline.log_collection.collectors[0];
assert.ok(collector);
const validate = compileLineValidator(collector.required_log_information, {
  maxLineBytes: collector.max_line_bytes,
  maxDepth: 32,
});

test('the mix holds its share of every hostile kind, each marked, and the shipped collector judges each as the mix says', () => {
  const lines = [
    ...hostileMix({ seed: 4, hosts: 40, lines: 5_000, share: 0.2, nearLimitEvery: 50, firstId: 100 }),
  ];
  assert.equal(lines.length, 5_000);
  assert.deepEqual(
    lines.map((l) => l.id),
    lines.map((_, i) => 100 + i),
  );
  const kinds = new Map<HostileKind, number>();
  const reasons = new Map<HostileKind, Set<string>>();
  for (const l of lines) {
    assert.equal(lineIdOf(l.value), l.id);
    const verdict = validate(Buffer.from(l.value));
    assert.equal(verdict.ok, l.valid, `${l.kind ?? 'valid'} line ${l.id}`);
    if (l.kind === undefined) continue;
    kinds.set(l.kind, (kinds.get(l.kind) ?? 0) + 1);
    if (!verdict.ok) reasons.set(l.kind, (reasons.get(l.kind) ?? new Set()).add(reasonClass(verdict.reason)));
  }
  assert.equal(
    [...kinds.values()].reduce((a, b) => a + b),
    1_000,
  );
  assert.deepEqual([...kinds.keys()].sort(), [...HOSTILE_KINDS].sort());
  assert.equal(kinds.get('near the size limit'), 20);
  // Unknown fields pass through: the collector's contract, so the line counts as valid.
  assert.equal(reasons.get('unknown fields'), undefined);
  assert.deepEqual(
    [...(reasons.get('near the size limit') ?? [])],
    ['line of N bytes exceeds max_line_bytes'],
  );
  assert.deepEqual([...(reasons.get('not JSON') ?? [])], ['not JSON']);
  assert.deepEqual([...(reasons.get('invalid UTF-8') ?? [])], ['not valid UTF-8']);
  const near = lines.find((l) => l.kind === 'near the size limit');
  assert.equal(Buffer.byteLength(near?.value ?? ''), NEAR_LIMIT_BYTES);
  assert.doesNotThrow(() => JSON.parse(String(near?.value)));
});

test('a mix of many lines with a large hostile share has every line it was asked for', () => {
  let n = 0;
  for (const l of hostileMix({
    seed: 2,
    hosts: 40,
    lines: 60_000,
    share: 0.5,
    nearLimitEvery: 0,
    firstId: 0,
  }))
    if (l.id === n) n += 1;
  assert.equal(n, 60_000);
});

test("a stage's rate counts only the intervals it had a backlog throughout", () => {
  const at = (s: number, committed: number, lag: number) => ({ atMs: s * 1000, committed, lag });
  // Busy 0-4 s (400 records), then idle: the idle intervals do not dilute the rate.
  assert.deepEqual(busyRate([at(0, 0, 50), at(2, 200, 30), at(4, 400, 10), at(6, 410, 0), at(8, 410, 0)]), {
    perSecond: 100,
    seconds: 4,
    records: 400,
  });
  assert.deepEqual(busyRate([at(0, 0, 0), at(2, 10, 0)]), { perSecond: undefined, seconds: 0, records: 0 });
});
