import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outputWindow } from '../../../bench/compare/run.ts';
import { ratios, rows } from '../../../bench/compare/report.ts';
import type { Peer } from '../../../bench/compare/peers.ts';
import type { RunResult } from '../../../bench/compare/run.ts';

// [ms, output end offsets, committed]: a tiny first transaction at 1 s, then 1,000 records a second
// from 2 s, markers included (1,010 end offsets for 1,000 records).
const samples: [number, number, number][] = [
  [0, 0, 0],
  [1_000, 2, 0],
  [2_000, 2, 0],
  ...Array.from({ length: 10 }, (_, i): [number, number, number] => [
    3_000 + i * 1_000,
    2 + (i + 1) * 100.8,
    0,
  ]),
];

test('the steady window opens at 10 % of the output and closes at 90 %, markers scaled out', () => {
  const w = outputWindow(samples, 1_000, 0.1, 0.9);
  assert.equal(w.t0, 3_000, 'the first sample at or above 101 end offsets');
  assert.equal(w.t1, 11_000, 'the first sample at or above 909');
  assert.ok(Math.abs(w.records - (1_000 * (2 + 9 * 100.8 - 102.8)) / 1_010) < 1e-9);
});

test('the first-to-last window opens at the tiny first transaction and so counts the pause after it', () => {
  const w = outputWindow(samples, 1_000, Number.MIN_VALUE, 1);
  assert.equal(w.t0, 1_000);
  assert.equal(w.t1, 12_000);
  const steady = outputWindow(samples, 1_000, 0.1, 0.9);
  assert.ok((w.records * 1000) / (w.t1 - w.t0) < (steady.records * 1000) / (steady.t1 - steady.t0));
});

test('no output gives no window rather than a rate', () => {
  const w = outputWindow([[0, 0, 0]], 10, 0.1, 0.9);
  assert.ok(Number.isNaN(w.t0) && Number.isNaN(w.records));
});

test('ratios pair the repetitions in both windows, and the rows carry the load of their runs', () => {
  const peers = [
    { id: 'runtime-eos', label: 'eos' },
    { id: 'streams-eq', label: 'streams' },
  ] as Peer[];
  const run = (peer: string, rep: number, perSec: number, first: number, load: [number, number]) =>
    ({
      peer,
      recordBytes: 200,
      rep,
      ok: true,
      recordsPerSec: perSec,
      firstToLastPerSec: first,
      loadAverage: load,
    }) as RunResult;
  const results = [
    run('runtime-eos', 0, 100, 90, [1, 2]),
    run('streams-eq', 0, 100, 60, [2, 3]),
    run('runtime-eos', 1, 120, 100, [0.5, 1]),
    run('streams-eq', 1, 100, 80, [4, 1]),
  ];
  const table = rows(peers, [200], results);
  assert.deepEqual(
    [table[0]!.loadMin, table[0]!.loadMax, table[1]!.loadMin, table[1]!.loadMax],
    [0.5, 2, 1, 4],
  );
  const [r] = ratios(table, results);
  assert.equal(r!.name, 'runtime-eos / streams-eq');
  assert.equal(r!.paired, 1.1, 'the median of 1.0 and 1.2');
  assert.equal(r!.pairedFirstToLast, (1.5 + 1.25) / 2);
});
