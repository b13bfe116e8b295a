/**
 * `node --import tsx bench/demo-warnings.ts [--hosts 80] [--duration 40] [--rate 200] [--seeds 10]`:
 * how often the DGA model warns on the demo's benign traffic, and whether a benign host reaches an
 * alert. Scores every NXDOMAIN name of every benign host (the prefilter passes only those) and runs
 * the detector's own event-time warning windows over them at the shipped config's settings: the
 * `threshold` with `min_warnings`, and the `weak_warnings` and `spread_warnings` rules beside it.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, warningWindowSettings } from '../src/config/index.ts';
import { modelFromBytes } from '../src/stages/detector/model/model-file.ts';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
import { windowRules } from '../src/stages/detector/spread-group.ts';
import { advanceWindows, type HostWindows, type WindowLine } from '../src/stages/detector/warning-window.ts';
import { generateTraffic } from '../src/traffic/index.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '80' },
    duration: { type: 'string', default: '40' },
    rate: { type: 'string', default: '200' },
    seeds: { type: 'string', default: '10' },
  },
});
const config = loadConfig({ path: 'config.yaml' });
const detector = config.pipeline.data_analysis.find((d) => d.detector_class_name === 'DGADetector')!;
const modelPath = `models/${detector.model}.json`;
const model = modelFromBytes(modelPath, readFileSync(modelPath), detector.checksum!);
const settings = windowRules(warningWindowSettings(detector), detector.threshold);

const scores = new Map<string, number>();
const score = (name: string) => {
  let s = scores.get(name);
  if (s === undefined) scores.set(name, (s = scoreNames(model, [name])[0] ?? 0));
  return s;
};
let names = 0;
let warnings = 0;
let weakWarnings = 0;
let accused = 0;
const accusedBy: string[] = [];
const warned = new Map<string, number>();
for (let seed = 1; seed <= Number(values.seeds); seed += 1) {
  const traffic = generateTraffic({
    seed,
    rate: Number(values.rate),
    durationSeconds: Number(values.duration),
    hosts: Number(values.hosts),
    startMs: 0,
  });
  const benign = new Set(traffic.truth.filter((h) => h.role === 'benign').map((h) => h.ip));
  const lines: WindowLine<{ status_code: string }>[] = [];
  for (const line of traffic.lines()) {
    const fields = JSON.parse(line.line) as { status_code: string; domain_name: string };
    if (fields.status_code !== 'NXDOMAIN' || !benign.has(line.srcIp)) continue;
    names += 1;
    const s = score(fields.domain_name);
    if (s >= settings.threshold) {
      warnings += 1;
      warned.set(fields.domain_name, (warned.get(fields.domain_name) ?? 0) + 1);
    } else if (settings.weak && s >= settings.weak.threshold) weakWarnings += 1;
    // Every failed name goes in: the spread rule counts them whatever they score.
    const id = String(lines.length);
    lines.push({
      host: line.srcIp,
      id,
      name: fields.domain_name,
      atMs: line.atMs,
      score: s,
      payload: fields,
    });
  }
  const state = new Map<string, HostWindows<{ status_code: string }>>();
  const step = advanceWindows((h) => state.get(h), lines, settings, 0);
  const hosts = new Set(step.alerts.map((a) => a.host));
  accused += hosts.size;
  for (const a of step.alerts) accusedBy.push(...a.warnings.map((w) => w.name));
}
const weakText =
  (settings.weak ? `, or ${settings.weak.minWarnings} at ${settings.weak.threshold} (weak_warnings)` : '') +
  (settings.spread
    ? `, or ${settings.spread.minWarnings} failed names under one domain (spread_warnings)`
    : '');
console.log(
  `${values.seeds} seeds x ${values.hosts} hosts x ${values.duration} s at ${values.rate} lines/s; ` +
    `an alert needs ${settings.minWarnings} distinct names at ${settings.threshold}${weakText} ` +
    `within ${settings.windowMs / 1000} s of event time`,
);
console.log(
  `benign NXDOMAIN names ${names}; at the threshold ${warnings} (${((100 * warnings) / Math.max(1, names)).toFixed(2)} %)` +
    (settings.weak ? `; at the weak threshold only ${weakWarnings}` : ''),
);
console.log(
  `benign hosts alerted: ${accused}${accusedBy.length > 0 ? ` (names: ${[...new Set(accusedBy)].slice(0, 8).join(', ')})` : ''}`,
);
console.log(
  `names warned on most: ${
    [...warned]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([name, n]) => `${name} (${n}, ${score(name).toFixed(3)})`)
      .join(', ') || 'none'
  }`,
);
