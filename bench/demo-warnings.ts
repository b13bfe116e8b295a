/**
 * `node --import tsx bench/demo-warnings.ts [--hosts 80] [--duration 40] [--rate 200] [--seeds 10]`:
 * how often the DGA model warns on the demo's benign traffic, and whether a benign host can reach
 * the detector's `min_warnings` in one batch. Scores every NXDOMAIN name of every benign host (the
 * prefilter passes only those) and counts warnings (score >= the detector's `threshold`) per host and
 * `batch_timeout` window (a collector batch holds at most that much of a subnet's traffic).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import { modelFromBytes } from '../src/stages/detector/model/model-file.ts';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
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
const windowMs = config.pipeline.log_collection.default_batch_handler_config.batch_timeout * 1000;
const minWarnings = detector.min_warnings;

const scores = new Map<string, number>();
const score = (name: string) => {
  let s = scores.get(name);
  if (s === undefined) scores.set(name, (s = scoreNames(model, [name])[0] ?? 0));
  return s;
};
let names = 0;
let warnings = 0;
let most = 0;
let accused = 0;
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
  const perWindow = new Map<string, number>();
  for (const line of traffic.lines()) {
    const fields = JSON.parse(line.line) as { status_code: string; domain_name: string };
    if (fields.status_code !== 'NXDOMAIN' || !benign.has(line.srcIp)) continue;
    names += 1;
    if (score(fields.domain_name) < detector.threshold) continue;
    warnings += 1;
    warned.set(fields.domain_name, (warned.get(fields.domain_name) ?? 0) + 1);
    const key = `${line.srcIp} ${Math.floor(line.atMs / windowMs)}`;
    perWindow.set(key, (perWindow.get(key) ?? 0) + 1);
  }
  const counts = [...perWindow.values()];
  most = Math.max(most, ...counts);
  accused += new Set([...perWindow].filter(([, n]) => n >= minWarnings).map(([k]) => k.split(' ')[0])).size;
}
console.log(
  `${values.seeds} seeds x ${values.hosts} hosts x ${values.duration} s at ${values.rate} lines/s; threshold ${detector.threshold}, min_warnings ${minWarnings}, windows of ${windowMs / 1000} s`,
);
console.log(
  `benign NXDOMAIN names ${names}, warnings ${warnings} (${((100 * warnings) / Math.max(1, names)).toFixed(2)} %)`,
);
console.log(
  `most warnings of one benign host in one window: ${most}; hosts reaching min_warnings: ${accused}`,
);
console.log(
  `names warned on most: ${[...warned]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([name, n]) => `${name} (${n}, ${score(name).toFixed(2)})`)
    .join(', ')}`,
);
