// Counts how many generated HAMSTRING v2.0.0-format lines the first collector of a config accepts,
// with the collector's own line validator (no Kafka). Options: --config F (default config.yaml),
// --lines N (default 200000), --format v2|heidgaf, --seed N. Prints the count and the commonest
// reasons for refusal.
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import { compileLineValidator, DEFAULT_MAX_JSON_DEPTH } from '../src/stages/collector/line-validation.ts';
import { generateTraffic } from '../src/traffic/generator.ts';

const { values } = parseArgs({
  options: {
    config: { type: 'string', default: 'config.yaml' },
    lines: { type: 'string', default: '200000' },
    format: { type: 'string', default: 'v2' },
    seed: { type: 'string', default: '1' },
  },
});
const format = values.format === 'heidgaf' ? 'heidgaf' : 'v2';
const wanted = Number(values.lines);
const config = loadConfig({ path: values.config, env: {} });
const [collector] = config.pipeline.log_collection.collectors;
if (!collector) throw new Error(`${values.config}: no collector in pipeline.log_collection.collectors`);
const validate = compileLineValidator(
  collector.required_log_information,
  { maxLineBytes: collector.max_line_bytes, maxDepth: DEFAULT_MAX_JSON_DEPTH },
  collector.optional_log_information,
);
const rate = 1000;
const traffic = generateTraffic({
  seed: Number(values.seed),
  rate,
  durationSeconds: Math.ceil(wanted / rate) + 60,
  hosts: 200,
  startMs: Date.UTC(2026, 10, 30),
  format,
});
let seen = 0;
let accepted = 0;
const reasons = new Map<string, number>();
for (const { line } of traffic.lines()) {
  if (seen === wanted) break;
  seen += 1;
  const verdict = validate(Buffer.from(line));
  if (verdict.ok) accepted += 1;
  else {
    // The value in a reason varies per line; the field and the rule do not.
    const key = verdict.reason.replace(/"[^"]*" (does not|is not)/, '<value> $1');
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
  }
}
console.log(`${values.config}: ${accepted} of ${seen} ${format}-format lines accepted`);
for (const [reason, count] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 5))
  console.log(`  ${count} refused: ${reason}`);
