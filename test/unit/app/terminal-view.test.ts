import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AlertView } from '../../../src/app/dashboard/alert-view.ts';
import { aggregateStageMetrics, type StageMetrics } from '../../../src/app/dashboard/stage-metrics.ts';
import { foundBy, plainAlertLine, renderFrame, truncateVisible } from '../../../src/app/terminal/render.ts';
import { AlertCursor, type PipelineSnapshot } from '../../../src/app/terminal/snapshot.ts';
import { formatSummary, summarizeRun } from '../../../src/app/terminal/summary.ts';
import { startTerminalView } from '../../../src/app/terminal/terminal-view.ts';
import { ViewState } from '../../../src/app/terminal/view-model.ts';
import { waitFor } from '../../helpers/wait-for.ts';

function stage(name: string, over: Partial<StageMetrics> = {}): StageMetrics {
  const base = aggregateStageMetrics([
    { name: 'hamstring_worker_ready', labels: { stage: name }, value: 1 },
  ])[0]!;
  return { ...base, ...over };
}

function alert(host: string, time: number, over: Partial<AlertView> = {}): AlertView {
  return {
    host,
    time,
    score: 0.91,
    detector: 'dga_detector',
    family: 'conficker',
    domains: ['kq3vhz9x.biz', 'zz1.net'],
    result: '',
    suspiciousBatchId: `s-${host}-${time}`,
    ...over,
  };
}

const ESC = String.fromCharCode(27);
const CSI_SEQUENCE = new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g');
const MOVE_UP = new RegExp(`^${ESC}\\[\\d+F`);
const visible = (s: string) => s.replace(CSI_SEQUENCE, '');

test('rates come from two snapshots; a restarted worker does not give a negative rate', () => {
  const v = new ViewState(0);
  v.push({
    at: 1000,
    linesIn: 100,
    stages: [stage('log_collection.collector', { recordsIn: 1000 })],
    alerts: [],
  });
  const { model } = v.push({
    at: 3000,
    linesIn: 2100,
    stages: [stage('log_collection.collector', { recordsIn: 30, aborts: 1 })],
    alerts: [alert('10.0.0.5', 2500)],
  });
  assert.equal(model.linesPerSec, 1000);
  assert.equal(model.stages[0]?.recordsPerSec, 15);
  assert.equal(model.alertCount, 1);
});

test('a frame shows every stage with its active conditions and the latest alerts, within the width', () => {
  const v = new ViewState(0);
  const { model } = v.push({
    at: 65_000,
    linesIn: 5000,
    openBatches: 7,
    stages: [
      stage('log_collection.collector', { lag: 12, commits: 40 }),
      stage('data_analysis.detector', { alerts: { ...stage('x').alerts, aborts_while_lag_grows: 1 } }),
      stage('data_inspection.inspector', { ready: 0 }),
    ],
    alerts: [
      alert('10.0.0.5', 60_000, { domains: Array.from({ length: 30 }, (_, i) => `d${i}.example.com`) }),
    ],
  });
  const frame = renderFrame(model, 80).map(visible);
  assert.match(frame[0]!, /running 00:01:05 {3}lines in 5,000 .* open batches 7 {3}alerts 1/);
  assert.match(
    frame.find((l) => l.startsWith('collector'))!,
    /collector\s+1\s+0\.0\s+12\s+40\s+0\s+0\s+ok/,
  );
  assert.match(
    frame.find((l) => l.startsWith('detector'))!,
    /aborts\+lag-grows$/,
  );
  assert.match(
    frame.find((l) => l.startsWith('inspector'))!,
    /NOT READY$/,
    'a failed worker stays listed',
  );
  const line = frame.find((l) => l.includes('10.0.0.5'))!;
  assert.match(line, /10\.0\.0\.5\s+0\.910\s+conficker \(dga_detector\)\s+d0\.example\.com/);
  assert.ok(
    frame.every((l) => l.length <= 80),
    'no line wider than the terminal',
  );
  assert.equal(visible(truncateVisible('\x1b[1mabcdef\x1b[22m', 3)), 'abc');
});

/** A scripted snapshot source: the next snapshot each call, then the last one again. */
function scripted(snaps: PipelineSnapshot[]) {
  let i = 0;
  let calls = 0;
  const source = () => {
    calls += 1;
    const s = snaps[Math.min(i, snaps.length - 1)]!;
    i += 1;
    return Promise.resolve(i > snaps.length ? { ...s, alerts: [] } : s);
  };
  return { source, calls: () => calls };
}

test('without a terminal each alert is one log line, once, and status lines follow the interval', async () => {
  const written: string[] = [];
  const { source, calls } = scripted([
    { at: 1000, linesIn: 10, stages: [stage('log_collection.collector')], alerts: [] },
    { at: 2000, linesIn: 20, stages: [stage('log_collection.collector')], alerts: [alert('10.0.0.5', 1500)] },
    {
      at: 3000,
      linesIn: 30,
      stages: [stage('log_collection.collector')],
      alerts: [alert('10.0.0.6', 2500, { family: 'tunnel' })],
    },
  ]);
  const view = startTerminalView({
    source,
    out: { write: (t) => written.push(t), isTTY: false },
    intervalMs: 5,
    statusEveryMs: 60_000,
  });
  await waitFor(() => calls() >= 4, { timeoutMs: 5000, message: 'the view reads snapshots' });
  const { alerts } = await view.stop();
  const text = written.join('');
  assert.equal(text.match(/ALERT host=10\.0\.0\.5 score=0\.910 family=conficker/g)?.length, 1);
  assert.equal(text.match(/ALERT host=10\.0\.0\.6 .*family=tunnel/g)?.length, 1);
  assert.ok(!text.includes('\x1b['), 'no escape sequences in plain output');
  assert.match(text.split('\n')[0]!, /^\[hamstring\] 00:00:00 lines_in=10/);
  assert.match(text.trimEnd().split('\n').at(-1)!, /^\[hamstring\] .*lines_in=30 .*alerts=2/);
  assert.deepEqual(
    alerts.map((a) => a.host),
    ['10.0.0.5', '10.0.0.6'],
  );
});

test('on a terminal the frame is redrawn in place and the cursor comes back at the end', async () => {
  const written: string[] = [];
  const { source, calls } = scripted([
    { at: 1000, linesIn: 10, stages: [stage('log_collection.collector')], alerts: [] },
  ]);
  const view = startTerminalView({
    source,
    out: { write: (t) => written.push(t), isTTY: true, columns: 100 },
    intervalMs: 5,
  });
  await waitFor(() => calls() >= 3, { timeoutMs: 5000, message: 'the view redraws' });
  await view.stop();
  assert.equal(written[0], '\x1b[?25l');
  assert.equal(written.at(-1), '\x1b[?25h');
  const frames = written.slice(1, -1);
  assert.ok(!MOVE_UP.test(frames[0]!), 'the first frame does not move up');
  assert.match(frames[1]!, MOVE_UP, 'later frames go back to the first line');
  assert.match(visible(frames[1]!), /HAMSTRING {2}running/);
});

test("the view's last read, after the pipeline drained, is tried again when it fails and shows what it brings", async () => {
  const written: string[] = [];
  const errors: unknown[] = [];
  let finalCalls = 0;
  const source = (o?: { final?: boolean }): Promise<PipelineSnapshot> => {
    const base = { at: 1000, linesIn: 10, stages: [stage('log_collection.collector')] };
    if (!o?.final) return Promise.resolve({ ...base, alerts: [] });
    finalCalls += 1;
    if (finalCalls < 3) return Promise.reject(new Error('ClickHouse: timeout'));
    return Promise.resolve({ ...base, alerts: [alert('10.0.0.7', 1500)] });
  };
  const view = startTerminalView({
    source,
    out: { write: (t) => written.push(t), isTTY: false },
    intervalMs: 5,
    onError: (e) => errors.push(e),
  });
  const { alerts } = await view.stop();
  assert.equal(finalCalls, 3, 'two failed last reads, then one that worked');
  assert.equal(errors.length, 2, 'each failure is reported');
  assert.deepEqual(
    alerts.map((a) => a.host),
    ['10.0.0.7'],
  );
  assert.equal(written.join('').match(/ALERT host=10\.0\.0\.7 /g)?.length, 1);
});

/** `alertsAfter` over a list the test changes: the alerts after a time, oldest first, a page of them. */
function alertStore(stored: AlertView[]) {
  return {
    alertsAfter: (after: number, limit: number) =>
      Promise.resolve(
        stored
          .filter((x) => x.time > after)
          .sort((x, y) => x.time - y.time)
          .slice(0, limit),
      ),
  };
}

test('the alert cursor returns each alert once, also when several share a millisecond', async () => {
  const stored: AlertView[] = [alert('a', 10), alert('b', 20), alert('c', 20)];
  const data = alertStore(stored);
  const cursor = new AlertCursor(data, 2);
  assert.deepEqual(
    (await cursor.next()).map((x) => x.host),
    ['a', 'b'],
  );
  assert.deepEqual(
    (await cursor.next()).map((x) => x.host),
    ['c'],
  );
  assert.deepEqual(await cursor.next(), []);
  stored.push(alert('d', 20), alert('e', 30));
  assert.deepEqual(
    (await cursor.next()).map((x) => x.host),
    ['d', 'e'],
  );
  assert.deepEqual(await cursor.next(), []);
});

test('an alert names the family and the detector it reports, or the detector alone', () => {
  assert.equal(foundBy({ family: 'conficker', detector: 'dga_detector' }), 'conficker (dga_detector)');
  assert.equal(foundBy({ family: '', detector: 'dga_detector' }), 'dga_detector');
  assert.equal(foundBy({ family: '', detector: '' }), '-');
  const line = plainAlertLine(alert('10.0.0.9', 1, { family: '' }));
  assert.match(
    line,
    /ALERT host=10\.0\.0\.9 score=0\.910 detector=dga_detector domains=kq3vhz9x\.biz,zz1\.net$/,
  );
});

test('the alert cursor skips alerts before `since` and holds an alert back until its detector is known', async () => {
  const stored: AlertView[] = [
    alert('old', 5),
    alert('a', 10),
    alert('b', 20, { detector: '' }),
    alert('c', 30),
  ];
  const data = alertStore(stored);
  let now = 1_000;
  const cursor = new AlertCursor(data, 10, { since: 10, detectorGraceMs: 5_000, now: () => now });
  assert.deepEqual(
    (await cursor.next()).map((x) => x.host),
    ['a'],
    'b waits for its detector, and c after it to keep the order',
  );
  stored[2] = { ...stored[2]!, detector: 'dga_detector' };
  assert.deepEqual(
    (await cursor.next()).map((x) => [x.host, x.detector]),
    [
      ['b', 'dga_detector'],
      ['c', 'dga_detector'],
    ],
  );
  stored.push(alert('d', 40, { detector: '' }));
  assert.deepEqual(await cursor.next(), []);
  now = 5_999;
  assert.deepEqual(await cursor.next(), [], 'held until the grace since its first read is over');
  now = 6_000;
  assert.deepEqual(
    (await cursor.next()).map((x) => [x.host, x.detector]),
    [['d', '']],
    'after the grace period it comes without a detector',
  );
  assert.deepEqual(await cursor.next(), []);
  // An alert that reached ClickHouse long after its own time (a loaded machine) still gets the whole
  // grace: it counts from the first read, not from the alert's time.
  now = 100_000;
  stored.push(alert('e', 50, { detector: '' }));
  assert.deepEqual(await cursor.next(), [], 'e waits although it was stamped 99.95 s ago');
  stored[stored.length - 1] = { ...stored.at(-1)!, detector: 'domainator' };
  assert.deepEqual(
    (await cursor.next()).map((x) => [x.host, x.detector]),
    [['e', 'domainator']],
  );
  // The last read (the pipeline drained): an alert still without its detector comes at once.
  stored.push(alert('f', 60, { detector: '' }), alert('g', 70));
  assert.deepEqual(await cursor.next(), [], 'f waits, and g after it');
  assert.deepEqual(
    (await cursor.next({ final: true })).map((x) => [x.host, x.detector]),
    [
      ['f', ''],
      ['g', 'dga_detector'],
    ],
  );
});

test('the summary names infected hosts found, missed and hosts falsely accused', () => {
  const summary = summarizeRun({
    linesIn: 1000,
    batches: 20,
    suspiciousBatches: 5,
    alerts: [
      { host: '10.0.0.5', family: 'conficker' },
      { host: '10.0.0.5', family: 'conficker' },
      { host: '10.0.0.9' },
      { host: '10.0.0.6', family: 'tunnel' },
    ],
    truth: {
      infected: new Map([
        ['10.0.0.5', 'conficker'],
        ['10.0.0.6', 'dns-tunnel'],
        ['10.0.0.7', 'necurs'],
      ]),
    },
  });
  assert.deepEqual(summary.found, [
    { host: '10.0.0.5', infectedWith: 'conficker', alerts: 2, familiesReported: ['conficker'] },
    { host: '10.0.0.6', infectedWith: 'dns-tunnel', alerts: 1, familiesReported: ['tunnel'] },
  ]);
  assert.deepEqual(summary.missed, [{ host: '10.0.0.7', infectedWith: 'necurs' }]);
  assert.deepEqual(summary.falselyAccused, [{ host: '10.0.0.9', alerts: 1 }]);
  const text = formatSummary(summary);
  assert.match(text, /infected hosts found {4}2 of 3/);
  assert.match(text, /infected hosts missed {3}1\n {4}10\.0\.0\.7 +necurs/);
  assert.match(text, /hosts falsely accused {3}1\n {4}10\.0\.0\.9 +1 alert/);
});

test('an alert line quotes a family with spaces, so the line still splits on spaces', () => {
  const line = plainAlertLine({
    host: '10.0.0.7',
    time: 0,
    score: 0.999,
    detector: 'dga_detector',
    family: 'hash DGA (87 %)',
    domains: ['a.com'],
    result: '[]',
    suspiciousBatchId: 'b',
  });
  assert.match(line, /family="hash DGA \(87 %\)" detector=dga_detector domains=a\.com$/);
});
