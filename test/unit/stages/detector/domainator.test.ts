import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DetectorConfig } from '../../../../src/config/index.ts';
import {
  createDomainator,
  observe,
  WINDOWS_STORE,
  windowKey,
  type DomainWindow,
} from '../../../../src/stages/detector/domainator/domainator.ts';
import {
  levenshtein,
  similarity,
  tunnellingScore,
  windowFeatures,
} from '../../../../src/stages/detector/domainator/similarity.ts';
import type { Alert } from '../../../../src/stages/messages.ts';
import { seededRandom } from '../../../../src/traffic/random.ts';
import { MemoryState, MemoryStore } from '../../../support/memory-state.ts';
import { jsonRecord, stageContext, timerContext } from '../../../support/stage-context.ts';

test('edit distance and similarity of subdomains', () => {
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.equal(levenshtein('', 'abc'), 3);
  assert.equal(similarity('abcd', 'abcd'), 1);
  assert.equal(similarity('abcd', 'abcf'), 0.75);
  assert.equal(similarity('ab', 'cd'), 0);
});

test('window features and the tunnelling score, by hand', () => {
  // "ab", "ab", "cd": lengths 2, entropies 1; 2 distinct of 3; pair similarities 1, 0, 0.
  const f = windowFeatures(['ab', 'ab', 'cd']);
  assert.deepEqual(f, { meanLength: 2, meanEntropy: 1, distinctRatio: 2 / 3, meanSimilarity: 1 / 3 });
  // min(1, 2/40) * (min(1, 1/4) + 2/3 + (1 - 1/3)) / 3
  assert.ok(Math.abs(tunnellingScore(f) - ((2 / 40) * (0.25 + 2 / 3 + 2 / 3)) / 3) < 1e-15);
  // Long, random, all different: every factor at 1.
  assert.equal(tunnellingScore({ meanLength: 50, meanEntropy: 4.6, distinctRatio: 1, meanSimilarity: 0 }), 1);
});

const base32 = (seed: number, n: number) => {
  const random = seededRandom(seed);
  let s = '';
  for (let i = 0; i < n; i += 1) s += 'abcdefghijklmnopqrstuvwxyz234567'[random.int(0, 31)];
  return s;
};

test('a window is scored from its min_window-th request on and keeps at most max_window', () => {
  const store = new MemoryStore<DomainWindow>();
  const o = { minWindow: 3, maxWindow: 4, now: 1000 };
  const scores = [0, 1, 2, 3, 4, 5].map((i) =>
    observe(store, { src_ip: '10.0.0.9', domain_name: `${base32(i, 50)}.x.tunnel.co.uk` }, o),
  );
  assert.equal(scores[0], undefined);
  assert.equal(scores[1], undefined);
  assert.ok((scores[2]?.score ?? 0) > 0.8, `tunnel score ${scores[2]?.score}`);
  const window = store.get(windowKey('tunnel.co.uk', '10.0.0.9'));
  assert.equal(window?.entries.length, 4);
  assert.equal(window?.entries[3]?.subdomain, `${base32(5, 50)}.x`);
});

test('a name without subdomain opens no window', () => {
  const store = new MemoryStore<DomainWindow>();
  assert.equal(
    observe(
      store,
      { src_ip: '10.0.0.9', domain_name: 'example.com' },
      { minWindow: 3, maxWindow: 10, now: 0 },
    ),
    undefined,
  );
  assert.equal(store.size, 0);
});

const detector: DetectorConfig = {
  name: 'domainator',
  detector_module_name: 'domainator_detector',
  detector_class_name: 'DomainatorDetector',
  threshold: 0.6,
  min_warnings: 1,
  inspector_name: 'tunnel_inspector',
  produce_topics: ['generic'],
  domainator: { min_window: 3, max_window: 10, idle_timeout_seconds: 60, search_domains: [] },
};
const topics = {
  input: 'pipeline-inspector_to_detector-domainator',
  alerts: ['pipeline-detector_to_alerter-generic'],
};
const batchOf = (id: string, lines: [string, string][]) => ({
  batch_tree_row_id: `row-${id}`,
  batch_id: id,
  begin_timestamp: '2026-11-30T00:00:00.000000Z',
  end_timestamp: `2026-11-30T00:00:0${lines.length - 1}.000000Z`,
  data: lines.map(([ip, domain], i) => ({
    logline_id: `${id}-${i}`,
    subnet_id: '10.0.0.0_24',
    ts: `2026-11-30T00:00:0${i}.000000Z`,
    src_ip: ip,
    domain_name: domain,
  })),
});

test('the tunnelling host is alerted; a host repeating mail and www names is not', () => {
  const state = new MemoryState();
  const stage = createDomainator({ detector, topics, clock: () => 5000 });
  const tunnel = [0, 1, 2, 3].map((i): [string, string] => [
    '10.0.0.66',
    `${base32(i + 10, 48)}.${i}.t.files-sync.com`,
  ]);
  const benign = [0, 1, 2, 3].map((i): [string, string] => [
    '10.0.0.5',
    `${i % 2 ? 'www' : 'mail'}.google.com`,
  ]);
  const result = stage.process(
    [
      jsonRecord(topics.input, 0, batchOf('b1', tunnel), '10.0.0.66'),
      jsonRecord(topics.input, 1, batchOf('b2', benign), '10.0.0.5'),
    ],
    stageContext(state),
  );
  if (result instanceof Promise) throw new Error('domainator scores synchronously');
  const alerts = result.outputs
    .filter((o) => o.topic === topics.alerts[0])
    .map((o) => JSON.parse(String(o.value)) as Alert);
  assert.deepEqual(
    alerts.map((a) => a.src_ip),
    ['10.0.0.66'],
  );
  assert.equal(alerts[0]?.detector_name, 'domainator');
  assert.equal(alerts[0]?.result.length, 2, 'the 3rd and 4th request complete a window');
  assert.deepEqual(
    (alerts[0]?.result[0]?.evidence as { window?: unknown } | undefined)?.window,
    tunnel.slice(0, 3).map(([, d]) => d.replace('.files-sync.com', '')),
  );
  // A window holds what its score reads and nothing else (it is a changelog record per line).
  const stored = state
    .partition(0)
    .store<DomainWindow>(WINDOWS_STORE)
    .get(windowKey('files-sync.com', '10.0.0.66'));
  assert.deepEqual(
    stored?.entries,
    tunnel.map(([, d]) => ({ subdomain: d.replace('.files-sync.com', '') })),
  );
});

test('windows persist across batches in the store and expire on the timer when idle', async () => {
  const state = new MemoryState();
  let now = 0;
  const stage = createDomainator({ detector, topics, clock: () => now });
  const one = (i: number): [string, string] => ['10.0.0.66', `${base32(i, 48)}.t.files-sync.com`];
  const run = (offset: number, lines: [string, string][]) => {
    const r = stage.process(
      [jsonRecord(topics.input, offset, batchOf(`b${offset}`, lines))],
      stageContext(state),
    );
    if (r instanceof Promise) throw new Error('sync');
    return r.outputs.filter((o) => o.topic === topics.alerts[0]).length;
  };
  assert.equal(run(0, [one(1), one(2)]), 0);
  assert.equal(run(1, [one(3)]), 1, 'the third request, in a later batch, completes the window');
  const store = state.partition(0).store<DomainWindow>(WINDOWS_STORE);
  assert.equal(store.size, 1);
  now = 30_000;
  await stage.onTimer?.(timerContext(state, 0, now));
  assert.equal(store.size, 1, 'not idle for 60 s yet');
  await stage.onTimer?.(timerContext(state, 0, 61_000));
  assert.equal(store.size, 0);
});

test('with a floor, a window is scored exactly when its score can reach the floor, and left unscored only when it cannot', () => {
  const random = seededRandom(31);
  const exact = new MemoryStore<DomainWindow>();
  const floored = new MemoryStore<DomainWindow>();
  const o = { minWindow: 3, maxWindow: 10, now: 1000 };
  let skipped = 0;
  let scored = 0;
  for (let i = 0; i < 3000; i += 1) {
    // Hosts and domains reused so windows fill; subdomain lengths around the floor's boundary.
    const line = {
      src_ip: `10.0.0.${random.int(1, 4)}`,
      domain_name: `${base32(i, random.int(1, 70))}.d${random.int(0, 5)}.example.com`,
    };
    const full = observe(exact, line, o);
    const bounded = observe(floored, line, { ...o, floor: 0.8 });
    if (bounded === undefined) {
      assert.ok((full?.score ?? 0) < 0.8, `unscored at ${i} though its score is ${full?.score}`);
      if (full !== undefined) skipped += 1;
    } else {
      assert.deepEqual(bounded, full);
      scored += 1;
    }
  }
  assert.ok(skipped > 100 && scored > 100, `both paths taken: ${skipped} skipped, ${scored} scored`);
});
