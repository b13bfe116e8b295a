import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addLines, closeOpenBin, type SubnetModel } from '../../../src/stages/inspector/bin-stream.ts';
import { inspectorModel } from '../../../src/stages/inspector/models.ts';
import type { LogLine } from '../../../src/stages/messages.ts';
import { line } from './batches.ts';
import { shippedConfig } from './fixtures.ts';

const inspector = shippedConfig().pipeline.data_inspection[0]!;
const model = inspectorModel(inspector);

/** Seeded so the traffic is the same on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/**
 * Ten seconds of one subnet: twelve benign hosts with a request every 80-160 ms, and two infected
 * hosts that each burst eight requests into one 20 ms bin now and then. Sorted by time.
 */
function traffic(): LogLine[] {
  const next = random(7);
  const lines: LogLine[] = [];
  for (let host = 1; host <= 12; host += 1)
    for (let t = next() * 0.1; t < 10; t += 0.08 + next() * 0.08)
      lines.push(line(`b${host}-${lines.length}`, t, { src_ip: `10.2.54.${host}` }));
  for (const [host, bursts] of [
    [66, [2.5, 6.1]],
    [77, [4.3, 8.7]],
  ] as const)
    for (const at of bursts)
      for (let i = 0; i < 8; i += 1)
        lines.push(line(`x${host}-${at}-${i}`, at + 0.0005 + i * 0.002, { src_ip: `10.2.54.${host}` }));
  return lines.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
}

/** Feeds `lines` cut at `cuts`, then closes the last bin; returns the suspicious hosts and decided ids. */
function judge(lines: readonly LogLine[], sizes: () => number): { hosts: string[]; decided: string[] } {
  let state: SubnetModel | undefined;
  const hosts = new Set<string>();
  const decided: string[] = [];
  let now = 0;
  for (let at = 0; at < lines.length;) {
    const size = Math.max(1, sizes());
    const verdicts = addLines(lines.slice(at, at + size), state, model, inspector, (now += 1000));
    verdicts.suspiciousHosts.forEach((h) => hosts.add(h));
    decided.push(...verdicts.decided.map((l) => l.logline_id));
    state = verdicts.next;
    at += size;
  }
  const last = closeOpenBin(state!, model, inspector);
  last.suspiciousHosts.forEach((h) => hosts.add(h));
  decided.push(...last.decided.map((l) => l.logline_id));
  return { hosts: [...hosts].sort(), decided };
}

test('the suspicious hosts do not depend on how the same lines are cut into batches', () => {
  const lines = traffic();
  const whole = judge(lines, () => lines.length);
  assert.ok(whole.hosts.includes('10.2.54.66') && whole.hosts.includes('10.2.54.77'), 'both bursts found');
  assert.deepEqual(
    [...whole.decided].sort(),
    lines.map((l) => l.logline_id).sort(),
    'every line decided once',
  );
  const next = random(11);
  for (const sizes of [() => 1, () => 7, () => 300, () => Math.floor(next() * 200)]) {
    const cut = judge(lines, sizes);
    assert.deepEqual(cut.hosts, whole.hosts);
    assert.deepEqual(cut.decided, whole.decided);
  }
});

test('counts are summed per bin across batches, quiet bins are learnt as zeros, a bin closes when a later line arrives', () => {
  const seen: number[][] = [];
  const recording = {
    ...model,
    scoreAndLearn: (_s: unknown[], row: readonly number[]) => (seen.push([...row]), 0),
  };
  const first = addLines([line('a', 0.001), line('b', 0.005)], undefined, recording, inspector, 1);
  assert.deepEqual([first.decided, seen], [[], []], 'the open bin waits');
  assert.equal(first.next.open?.count, 2);
  const second = addLines([line('c', 0.019), line('d', 0.065)], first.next, recording, inspector, 2);
  assert.deepEqual(
    seen,
    [[3], [0], [0]],
    'bin 0 holds three lines, bins 1 and 2 (20-60 ms) are empty; bin 3 stays open',
  );
  assert.deepEqual(second.decided, [], "the closed bins' lines wait until their span (1 s) is over");
  assert.deepEqual(
    second.next.held?.lines.map((l) => l.logline_id),
    ['a', 'b', 'c'],
  );
  const third = addLines([line('e', 1.001), line('f', 1.021)], second.next, recording, inspector, 3);
  assert.deepEqual(third.decided, [], 'no host was anomalous in the span: its lines wait for the next one');
  assert.deepEqual(
    [third.next.ended?.span, third.next.ended?.waiting.map((l) => l.logline_id)],
    [second.next.held?.span, ['a', 'b', 'c', 'd']],
    'a closed bin of the next span ends the span before it',
  );
  const fourth = addLines([line('g', 2.001), line('h', 2.021)], third.next, recording, inspector, 4);
  assert.deepEqual(
    fourth.decided.map((l) => l.logline_id),
    ['a', 'b', 'c', 'd'],
    'the next span ended with no host anomalous: the waiting lines finish',
  );
  assert.deepEqual(fourth.suspicious, []);
  assert.equal(
    second.next.open?.bin,
    Math.floor((Date.parse('2026-11-30T00:00:00Z') * 1000 + 65_000) / 20_000),
  );
});

/** A model that finds a bin anomalous when it holds at least `min` lines. */
const countsAtLeast = (min: number) => ({
  ...model,
  scoreAndLearn: (_s: unknown[], row: readonly number[]) => ((row[0] ?? 0) >= min ? 1 : 0),
});

test("a host anomalous in a span sends on its lines of the span before and the span after; others' lines finish", () => {
  const infected = { src_ip: '10.2.54.66' };
  // A burst straddling the boundary of spans 1 and 2 (epoch seconds): its four lines before it each
  // have a bin of their own, so only span 2 holds an anomalous bin. A lone line of it in span 3 follows.
  const lines = [
    line('quiet-1', 1.5),
    ...Array.from({ length: 4 }, (_, i) => line(`early-${i}`, 1.9 + i * 0.025, infected)),
    ...Array.from({ length: 8 }, (_, i) => line(`burst-${i}`, 2.001 + i * 0.001, infected)),
    line('quiet-2', 2.5, { src_ip: '10.2.54.9' }),
    line('quiet-3', 2.6),
    line('late', 3.3, infected),
    line('quiet-4', 3.4),
    line('quiet-5', 4.5),
    line('end', 5.001),
    line('end-2', 5.021),
  ];
  let state: SubnetModel | undefined;
  const on: string[] = [];
  const decided: string[] = [];
  for (const part of [lines.slice(0, 3), lines.slice(3, 9), lines.slice(9)]) {
    const v = addLines(part, state, countsAtLeast(5), inspector, 1);
    on.push(...v.suspicious.map((l) => l.logline_id));
    decided.push(...v.decided.map((l) => l.logline_id));
    state = v.next;
  }
  assert.deepEqual(
    on,
    [...lines.filter((l) => l.src_ip === infected.src_ip).map((l) => l.logline_id)],
    'every line of the infected host, in order: the span before its anomalous bin, its span, the span after',
  );
  assert.deepEqual(
    decided.filter((id) => id.startsWith('quiet')).sort(),
    ['quiet-1', 'quiet-2', 'quiet-3', 'quiet-4'],
    'the other hosts finished, span by span',
  );
  const last = closeOpenBin(state!, countsAtLeast(5), inspector);
  assert.deepEqual(
    last.decided.map((l) => l.logline_id),
    ['quiet-5', 'end', 'end-2'],
    'a subnet gone quiet decides what waited',
  );
  assert.deepEqual(last.suspicious, []);
});

test('with no bin open, a line older than the last closed bin goes on at once and the model never sees it', () => {
  const rows: number[][] = [];
  const recording = {
    ...model,
    scoreAndLearn: (_s: unknown[], row: readonly number[]) => (rows.push([...row]), 0),
  };
  const first = addLines([line('a', 5.001), line('b', 5.031)], undefined, recording, inspector, 1);
  // The subnet went quiet: the timer closes its newest bin (bin 251, 5.02-5.04 s).
  const closed = closeOpenBin(first.next, recording, inspector);
  assert.equal(closed.next.open, undefined);
  const seen = rows.length;
  // Another partition's lines of the same subnet, seconds behind: they go on, unjudged.
  const late = addLines(
    [line('late-1', 2.5, { src_ip: '10.2.54.9' }), line('late-2', 5.035)],
    closed.next,
    recording,
    inspector,
    2,
  );
  assert.deepEqual(
    late.suspicious.map((l) => l.logline_id),
    ['late-1', 'late-2'],
  );
  assert.equal(rows.length, seen, 'no bin opened behind the series, none learnt');
  assert.equal(late.next.open, undefined);
  const next = addLines([line('c', 5.045)], late.next, recording, inspector, 3);
  assert.deepEqual([next.suspicious, next.next.open?.count], [[], 1], 'a newer line opens a bin as before');
});

test('a line goes on as soon as its fate is sealed: when its host is found anomalous, or as it arrives once it is', () => {
  const infected = { src_ip: '10.2.54.66' };
  const rows: number[][] = [];
  const counting = {
    ...model,
    scoreAndLearn: (_s: unknown[], row: readonly number[]) => (
      rows.push([...row]),
      (row[0] ?? 0) >= 5 ? 1 : 0
    ),
  };
  const calls = [
    // Span 1: nothing anomalous; every line waits for the span's end.
    [
      line('quiet-1', 1.5),
      ...Array.from({ length: 4 }, (_, i) => line(`early-${i}`, 1.9 + i * 0.025, infected)),
    ],
    // Span 2: a burst in one bin, closed by the next line: the burst and the span before's lines go on now.
    [
      ...Array.from({ length: 8 }, (_, i) => line(`burst-${i}`, 2.001 + i * 0.001, infected)),
      line('quiet-2', 2.05),
    ],
    // A later line of the host in span 2 goes on as it arrives, its bin still open.
    [line('late', 2.3, infected)],
    // So does one in span 3, the span after the anomalous one.
    [line('after', 3.2, infected)],
  ];
  let state: SubnetModel | undefined;
  const perCall: string[][] = [];
  for (const part of calls) {
    const v = addLines(part, state, counting, inspector, 1);
    perCall.push(v.suspicious.map((l) => l.logline_id));
    state = v.next;
  }
  assert.deepEqual(perCall, [
    [],
    ['early-0', 'early-1', 'early-2', 'early-3', ...Array.from({ length: 8 }, (_, i) => `burst-${i}`)],
    ['late'],
    ['after'],
  ]);
  assert.ok(
    rows.some(([count]) => count === 8),
    'the burst bin was scored with all eight lines',
  );
  assert.deepEqual(
    [state!.open?.count, state!.open?.lines, state!.open?.sentHosts],
    [1, [], [infected.src_ip]],
    'the open bin counts the line that went on, and remembers its host',
  );
  assert.deepEqual(
    [state!.ended?.waiting.map((l) => l.logline_id), state!.held?.lines.map((l) => l.logline_id)],
    [['quiet-1'], ['quiet-2']],
    "only the other host's lines wait for the ends of spans 2 and 3",
  );
});

test('the lines sent on are exactly those of hosts anomalous in the line’s span or a span beside it, however batched', () => {
  const counting = {
    ...model,
    scoreAndLearn: (_s: unknown[], row: readonly number[]) => ((row[0] ?? 0) >= 5 ? 1 : 0),
  };
  const lines = traffic();
  const micros = (l: LogLine) => Date.parse(l.ts.slice(0, 19) + 'Z') * 1000 + Number(l.ts.slice(20, 26));
  const binOf = (l: LogLine) => Math.floor(micros(l) / 20_000);
  const spanOf = (l: LogLine) => Math.floor(micros(l) / 1_000_000);
  const counts = new Map<number, number>();
  for (const l of lines) counts.set(binOf(l), (counts.get(binOf(l)) ?? 0) + 1);
  const anomalousIn = new Set(
    lines.filter((l) => counts.get(binOf(l))! >= 5).map((l) => `${spanOf(l)} ${l.src_ip}`),
  );
  const expected = lines
    .filter((l) => [-1, 0, 1].some((d) => anomalousIn.has(`${spanOf(l) + d} ${l.src_ip}`)))
    .map((l) => l.logline_id)
    .sort();
  assert.ok(expected.length >= 32, 'both hosts’ bursts are found');
  const next = random(5);
  for (const sizes of [() => 1, () => 7, () => 300, () => Math.floor(next() * 200)]) {
    let state: SubnetModel | undefined;
    const on: string[] = [];
    for (let at = 0; at < lines.length;) {
      const size = Math.max(1, sizes());
      const v = addLines(lines.slice(at, at + size), state, counting, inspector, 1);
      on.push(...v.suspicious.map((l) => l.logline_id));
      state = v.next;
      at += size;
    }
    on.push(...closeOpenBin(state!, counting, inspector).suspicious.map((l) => l.logline_id));
    assert.deepEqual([...on].sort(), expected);
    assert.equal(new Set(on).size, on.length, 'each line sent once');
  }
});
