/**
 * `npm run bench:detector`: what scoring one suspicious batch costs, inline on the event loop and
 * through the ThreadPool, for batch sizes the pipeline produces. Prints milliseconds per batch and
 * names per second; decides whether a batch may be scored inline without starving Kafka.
 */
import { readFileSync } from 'node:fs';
import { ThreadPool } from '../src/runtime/index.ts';
import { DGA_SCORE_TASK_MODULE } from '../src/stages/detector/score-task.ts';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
import { modelFromBytes } from '../src/stages/detector/model/model-file.ts';
import { generateTraffic } from '../src/traffic/generator.ts';

const modelPath = 'models/dga-gbt.json';
const checksum = readFileSync(`${modelPath}.sha256`, 'utf8').split(/\s+/)[0] ?? '';
const model = modelFromBytes(modelPath, readFileSync(modelPath), checksum);
const names = [
  ...generateTraffic({ seed: 1, rate: 2000, durationSeconds: 10, hosts: 50, startMs: 0 }).lines(),
].map((l) => (JSON.parse(l.line) as { domain_name: string }).domain_name);

const pool = new ThreadPool({ module: DGA_SCORE_TASK_MODULE, size: 1 });
console.log(`model: ${model.file.classifier.trees.length} trees; names from the traffic generator`);
console.log('batch size | inline ms/batch | pool ms/batch | inline names/s');
for (const size of [10, 100, 1000, 2000]) {
  const batch = names.slice(0, size);
  const rounds = Math.max(5, Math.floor(20_000 / size));
  scoreNames(model, batch);
  let t = performance.now();
  for (let i = 0; i < rounds; i += 1) scoreNames(model, batch);
  const inline = (performance.now() - t) / rounds;
  await pool.run({ modelPath, checksum, domains: batch });
  t = performance.now();
  for (let i = 0; i < rounds; i += 1) await pool.run({ modelPath, checksum, domains: batch });
  const pooled = (performance.now() - t) / rounds;
  console.log(
    `${String(size).padStart(10)} | ${inline.toFixed(3).padStart(15)} | ${pooled.toFixed(3).padStart(13)} | ${Math.round((size / inline) * 1000)}`,
  );
}
await pool.close();
