import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  advanceWindows,
  expireIdle,
  type HostWindows,
  type WindowAlert,
  type WindowLine,
  type WindowSettings,
} from '../../../../src/stages/detector/warning-window.ts';

const W = 300_000;
const settings: WindowSettings = { threshold: 0.5, minWarnings: 3, windowMs: W, latenessMs: 60_000 };
const T0 = 1_000 * W; // a window boundary

let seq = 0;
const warn = (host: string, name: string, atMs: number, score = 0.9): WindowLine<null> => ({
  host,
  id: `${host}/${name}/${atMs}/${seq++}`,
  name,
  atMs,
  score,
  payload: null,
});
const benign = (host: string, atMs: number) => warn(host, `ok${atMs}.com`, atMs, 0.1);

/** Feeds the lines in the given batches through one state, returning every alert raised. */
function run(batches: readonly (readonly WindowLine<null>[])[], s = settings, nowMs = 0) {
  const state = new Map<string, HostWindows<null>>();
  const alerts: WindowAlert<null>[] = [];
  for (const batch of batches) {
    const step = advanceWindows((h) => state.get(h), batch, s, nowMs);
    for (const [host, next] of step.hosts)
      if (next) state.set(host, next);
      else state.delete(host);
    alerts.push(...step.alerts);
  }
  return { alerts, state };
}
const keys = (alerts: readonly WindowAlert[]) => alerts.map((a) => `${a.host}@${a.window}`).sort();

/** Every way to cut `lines` into consecutive batches of sizes 1..n (a sample: sizes 1, 2, 3, all). */
function cuts<T>(lines: readonly T[]): T[][][] {
  const out: T[][][] = [];
  for (const size of [1, 2, 3, lines.length]) {
    const batches: T[][] = [];
    for (let i = 0; i < lines.length; i += size) batches.push(lines.slice(i, i + size));
    out.push(batches);
  }
  return out;
}

test('a host with min_warnings distinct names within the window is alerted once, with every warning', () => {
  const lines = [warn('h', 'a.com', T0 + 1), warn('h', 'b.com', T0 + 2), warn('h', 'c.com', T0 + 3)];
  const { alerts } = run([lines]);
  assert.deepEqual(keys(alerts), [`h@${T0 / W}`]);
  assert.equal(alerts[0]?.startMs, T0);
  assert.equal(alerts[0]?.endMs, T0 + W);
  assert.deepEqual(
    alerts[0]?.warnings.map((w) => w.name),
    ['a.com', 'b.com', 'c.com'],
  );
});

test('one name repeated is one warning: the same name (any case, trailing dot) never makes a burst', () => {
  const lines = [warn('h', 'typo.com', T0), warn('h', 'TYPO.com', T0 + 1), warn('h', 'typo.com.', T0 + 2)];
  assert.deepEqual(run([lines]).alerts, []);
});

test('warnings below the threshold or further apart than the window do not count', () => {
  const spread = [warn('h', 'a.com', T0), warn('h', 'b.com', T0 + W), warn('h', 'c.com', T0 + 2 * W)];
  assert.deepEqual(run([spread]).alerts, []);
  const low = [warn('h', 'a.com', T0), warn('h', 'b.com', T0 + 1), warn('h', 'c.com', T0 + 2, 0.49)];
  assert.deepEqual(run([low]).alerts, []);
});

test('the alert does not depend on how the lines were cut into batches', () => {
  const lines = [
    benign('h', T0 - 10),
    warn('h', 'a.com', T0 + 10),
    benign('g', T0 + 11),
    warn('g', 'x.com', T0 + 12),
    warn('h', 'b.com', T0 + 100_000),
    benign('h', T0 + 150_000),
    warn('h', 'c.com', T0 + 250_000),
    warn('g', 'y.com', T0 + 260_000),
  ];
  const results = cuts(lines).map((batches) => keys(run(batches).alerts));
  for (const r of results) assert.deepEqual(r, [`h@${T0 / W}`]);
});

test('order independence within the lateness: any order of a window`s warnings gives the same alert', () => {
  const lines = [
    warn('h', 'a.com', T0 + 1_000),
    warn('h', 'b.com', T0 + 2_000),
    warn('h', 'c.com', T0 + 3_000),
  ];
  const orders = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
  ];
  for (const order of orders) {
    const shuffled = order.map((i) => lines[i]!);
    for (const batches of cuts(shuffled)) assert.deepEqual(keys(run(batches).alerts), [`h@${T0 / W}`]);
  }
});

test('a burst straddling a window boundary is caught, and named by the window it starts in', () => {
  const lines = [
    warn('h', 'a.com', T0 + W - 2_000),
    warn('h', 'b.com', T0 + W - 1_000),
    warn('h', 'c.com', T0 + W + 1_000),
  ];
  for (const batches of cuts(lines)) {
    const { alerts } = run(batches);
    assert.deepEqual(keys(alerts), [`h@${T0 / W}`]);
    assert.equal(alerts[0]?.warnings.length, 3, 'the warnings after the boundary belong to the alert');
  }
});

test('a straddling burst raises a second alert only when its part after the boundary alone suffices', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const lines = names.map((n, i) => warn('h', `${n}.com`, T0 + W - 3_000 + i * 1_000));
  assert.deepEqual(keys(run([lines]).alerts), [`h@${T0 / W}`, `h@${T0 / W + 1}`]);
});

test('at most one alert per host and window, also when its warnings arrive in several batches', () => {
  const batches = [
    [warn('h', 'a.com', T0 + 1), warn('h', 'b.com', T0 + 2)],
    [warn('h', 'c.com', T0 + 3)], // fires here
    [warn('h', 'd.com', T0 + 4), warn('h', 'e.com', T0 + 5), warn('h', 'f.com', T0 + 6)],
  ];
  const state = new Map<string, HostWindows<null>>();
  const perBatch = batches.map((batch) => {
    const step = advanceWindows((h) => state.get(h), batch, settings, 0);
    for (const [host, next] of step.hosts) if (next) state.set(host, next);
    return step.alerts;
  });
  assert.deepEqual(
    perBatch.map((a) => a.length),
    [0, 1, 0],
  );
  assert.deepEqual(
    perBatch[1]?.[0]?.warnings.map((w) => w.name),
    ['a.com', 'b.com', 'c.com'],
    'the alert carries the warnings of earlier batches',
  );
});

test('a line seen twice counts once', () => {
  const a = warn('h', 'a.com', T0 + 1);
  const b = warn('h', 'b.com', T0 + 2);
  assert.deepEqual(run([[a, b], [a, b], [{ ...a, name: 'z.com' }]]).alerts, []);
});

test('hosts are counted apart', () => {
  const lines = [warn('h', 'a.com', T0), warn('g', 'b.com', T0 + 1), warn('h', 'c.com', T0 + 2)];
  assert.deepEqual(run([lines]).alerts, []);
});

test('expiry: a window is dropped once the host`s watermark passes one window after it', () => {
  const { state } = run([[warn('h', 'a.com', T0 + 1), warn('h', 'b.com', T0 + 2)]]);
  assert.equal(state.get('h')?.warnings.length, 2);
  // Watermark = newest line - lateness; window T0/W is final at watermark >= T0 + 2W.
  const justBefore = advanceWindows((h) => state.get(h), [benign('h', T0 + 2 * W + 59_999)], settings, 0);
  assert.equal(justBefore.hosts.get('h')?.warnings.length, 2);
  const after = advanceWindows((h) => state.get(h), [benign('h', T0 + 2 * W + 60_000)], settings, 0);
  assert.equal(after.hosts.get('h'), undefined, 'nothing left to keep');
});

test('expiry keeps a fired window until it is final, so a late warning of it does not alert again', () => {
  const { state } = run([[warn('h', 'a.com', T0), warn('h', 'b.com', T0 + 1), warn('h', 'c.com', T0 + 2)]]);
  assert.deepEqual(state.get('h')?.fired, [T0 / W]);
  const again = advanceWindows(
    (h) => state.get(h),
    [warn('h', 'd.com', T0 + 3), warn('h', 'e.com', T0 + 4), warn('h', 'f.com', T0 + 5)],
    settings,
    0,
  );
  assert.deepEqual(again.alerts, []);
});

test('a warning older than the watermark (beyond the lateness) is late and ignored', () => {
  const { state } = run([[benign('h', T0 + 2 * W), warn('h', 'a.com', T0 + 2 * W)]]);
  const step = advanceWindows((h) => state.get(h), [warn('h', 'b.com', T0 + 2 * W - 60_001)], settings, 0);
  assert.equal(step.late.length, 1);
  const onTime = advanceWindows((h) => state.get(h), [warn('h', 'b.com', T0 + 2 * W - 60_000)], settings, 0);
  assert.equal(onTime.late.length, 0);
});

test('within one batch a line is judged by the lines before it: one large batch accepts what small ones do', () => {
  // An hour of one host in one batch: the early warnings are not late because of the batch's end.
  const lines = [warn('h', 'a.com', T0), warn('h', 'b.com', T0 + 1), warn('h', 'c.com', T0 + 2)];
  for (let m = 1; m <= 60; m += 1) lines.push(benign('h', T0 + m * 60_000));
  assert.deepEqual(keys(run([lines]).alerts), [`h@${T0 / W}`]);
});

test('idle expiry: a host without lines for the idle timeout (wall clock) is dropped', () => {
  const { state } = run([[warn('h', 'a.com', T0)]], settings, 1_000);
  const h = state.get('h')!;
  assert.equal(expireIdle(h, 1_000 + 660_000, 660_000), false);
  assert.equal(expireIdle(h, 1_000 + 660_001, 660_000), true);
});

test('the weak rule alerts on many distinct names below the threshold, and only on them', () => {
  const weak: WindowSettings = { ...settings, threshold: 0.9, weak: { threshold: 0.4, minWarnings: 5 } };
  const names = (n: number, score: number, host = 'h') =>
    Array.from({ length: n }, (_, i) => warn(host, `w${i}.com`, T0 + i * 1000, score));
  // Four names at 0.6: neither rule (three at 0.9, five at 0.4) holds.
  assert.deepEqual(run([names(4, 0.6)], weak).alerts, []);
  // Five at 0.6: the weak rule holds, and the alert carries them.
  const five = run([names(5, 0.6)], weak).alerts;
  assert.deepEqual(keys(five), [`h@${T0 / W}`]);
  assert.equal(five[0]?.warnings.length, 5);
  // Five below the weak threshold count for nothing; without the weak rule five at 0.6 do not either.
  assert.deepEqual(run([names(5, 0.39)], weak).alerts, []);
  assert.deepEqual(run([names(5, 0.6)], { ...settings, threshold: 0.9 }).alerts, []);
  // A strong name counts for the weak rule too: three weak and two strong names are five.
  const mixed = [
    ...names(3, 0.6),
    warn('h', 's1.com', T0 + 5000, 0.95),
    warn('h', 's2.com', T0 + 6000, 0.95),
  ];
  assert.deepEqual(keys(run([mixed], weak).alerts), [`h@${T0 / W}`]);
});

test('with the weak rule, the alerts still do not depend on batching or arrival order', () => {
  const weak: WindowSettings = { ...settings, threshold: 0.9, weak: { threshold: 0.4, minWarnings: 4 } };
  const lines = [
    warn('h', 'a.com', T0 + W - 4000, 0.5),
    warn('h', 'b.com', T0 + W - 3000, 0.5),
    warn('g', 'x.com', T0 + 10, 0.95),
    warn('h', 'c.com', T0 + W + 1000, 0.5),
    warn('g', 'y.com', T0 + 20, 0.5),
    warn('h', 'd.com', T0 + W + 2000, 0.5),
    warn('g', 'z.com', T0 + 30, 0.95),
  ];
  const expected = keys(run([lines], weak).alerts);
  // h's four weak names straddle a boundary and fire the window before it; g has two strong names only.
  assert.deepEqual(expected, [`h@${T0 / W}`]);
  for (const batches of [...cuts(lines), ...cuts([...lines].reverse())])
    assert.deepEqual(keys(run(batches, weak).alerts), expected);
});

/** Groups a name by the label right of its first (a stand-in for the registrable domain). */
const parent = (name: string) => (name.includes('.') ? name.slice(name.indexOf('.') + 1) : undefined);
const spread: WindowSettings = {
  ...settings,
  threshold: 0.9,
  spread: {
    threshold: 0,
    minWarnings: 4,
    groupOf: (name) => (name.endsWith('.exempt.com') ? undefined : parent(name)),
  },
};
const under = (n: number, domain: string, host = 'h', from = T0) =>
  Array.from({ length: n }, (_, i) => warn(host, `r${i}.${domain}`, from + i * 1000, 0.01));

test('the spread rule alerts on many distinct names under one domain, whatever they score, and names it', () => {
  const four = run([under(4, 'shadowed.com')], spread).alerts;
  assert.deepEqual(keys(four), [`h@${T0 / W}`]);
  assert.equal(four[0]?.group, 'shadowed.com');
  assert.equal(four[0]?.warnings.length, 4);
  // Three under one domain: below the rule; without the rule four count for nothing.
  assert.deepEqual(run([under(3, 'shadowed.com')], spread).alerts, []);
  assert.deepEqual(run([under(4, 'shadowed.com')], { ...settings, threshold: 0.9 }).alerts, []);
  // Four names under four domains, or under an exempt domain, are not a spread.
  const scattered = ['a.one.com', 'b.two.com', 'c.three.com', 'd.four.com'].map((n, i) =>
    warn('h', n, T0 + i, 0.01),
  );
  assert.deepEqual(run([scattered], spread).alerts, []);
  assert.deepEqual(run([under(6, 'x.exempt.com')], spread).alerts, []);
  // Two domains with three names each: every group counts on its own.
  assert.deepEqual(
    run([[...under(3, 'one.com'), ...under(3, 'two.com', 'h', T0 + 5000)]], spread).alerts,
    [],
  );
});

test('an alert the strong rule fires is not named after a group, even when the spread rule holds too', () => {
  const both = [
    ...under(4, 'shadowed.com'),
    ...['x.com', 'y.com', 'z.com'].map((n, i) => warn('h', n, T0 + i, 0.95)),
  ];
  const alerts = run([both], spread).alerts;
  assert.deepEqual(keys(alerts), [`h@${T0 / W}`]);
  assert.equal(alerts[0]?.group, undefined);
});

test('the spread rule counts the names of the anchor`s domain only: a later burst elsewhere fires its own window', () => {
  // One name under a.com at the end of window j, then four under b.com in window j+1.
  const lines = [warn('h', 'r.a.com', T0 + W - 1000, 0.01), ...under(4, 'b.com', 'h', T0 + W + 1000)];
  assert.deepEqual(keys(run([lines], spread).alerts), [`h@${T0 / W + 1}`]);
});

test('with the spread rule, the alerts still do not depend on batching or arrival order', () => {
  const lines = [
    ...under(2, 'shadowed.com', 'h', T0 + W - 4000),
    warn('g', 'r1.other.com', T0 + 10, 0.01),
    ...under(2, 'shadowed.com', 'h', T0 + W + 500).map((l, i) => ({ ...l, name: `s${i}.shadowed.com` })),
    warn('g', 'r2.other.com', T0 + 20, 0.01),
    warn('g', 'r3.other.com', T0 + 30, 0.01),
  ];
  const expected = keys(run([lines], spread).alerts);
  // h's four names straddle a boundary and fire the window before it; g has three only.
  assert.deepEqual(expected, [`h@${T0 / W}`]);
  for (const batches of [...cuts(lines), ...cuts([...lines].reverse())])
    assert.deepEqual(keys(run(batches, spread).alerts), expected);
});

test('a line no rule can count (below every threshold, or without a group) is not kept', () => {
  const s: WindowSettings = { ...spread, spread: { threshold: 0.001, minWarnings: 4, groupOf: parent } };
  const { state } = run(
    [[warn('h', 'bare', T0, 0.5), warn('h', 'r.low.com', T0 + 1, 0), warn('h', 'r.kept.com', T0 + 2, 0.01)]],
    s,
  );
  assert.deepEqual(
    state.get('h')?.warnings.map((w) => w.name),
    ['r.kept.com'],
  );
});
