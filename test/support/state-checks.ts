import assert from 'node:assert/strict';
import type { Registry } from 'prom-client';
import { createReadCommittedReader } from '../../src/kafka/read-committed-reader.ts';
import type { FetchedRecord } from '../../src/kafka/records.ts';
import { changelogTopic } from '../../src/runtime/state/changelog-topics.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Stage } from '../../src/runtime/stage.ts';
import type { WorkerOptions } from '../../src/runtime/worker-options.ts';
import { TransactionalWorker } from '../../src/runtime/worker/transactional-worker.ts';
import { testKafkaOptions } from './pipeline-harness.ts';

/**
 * Checks of the exactly-once state tests (test/integration/state/): independent read_committed
 * reads of an output and its changelog, and the sums a counting stage must end at.
 */

/** Sum of the seeded values per key: seed() writes value i under key `k-<i % keys>`. */
export function expectedSums(count: number, keys = 64): Map<string, number> {
  const sums = new Map<string, number>();
  for (let i = 0; i < count; i++) sums.set(`k-${i % keys}`, (sums.get(`k-${i % keys}`) ?? 0) + i);
  return sums;
}

/** Quiet time that ends a read once the reader stands at the end of every partition. */
const AT_END_QUIET_MS = 300;

/**
 * Everything committed in a topic (an independent read): read until nothing new came for `idleMs`,
 * or for a moment only once the reader stands at the end of every partition (nothing behind an
 * open transaction either: read_committed stops at its first record).
 */
export async function readAll(
  bootstrap: string,
  topic: string,
  idleMs = 3_000,
  timeoutMs = 180_000,
): Promise<FetchedRecord[]> {
  const reader = createReadCommittedReader({ bootstrap, clientId: 'state-check' });
  await reader.connect(30_000);
  reader.subscribe([topic]);
  const out: FetchedRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  let lastNew = Date.now();
  while (Date.now() < deadline) {
    const got = await reader.consume(5_000, 200);
    if (got.length > 0) lastNew = Date.now();
    out.push(...got);
    const quiet = Date.now() - lastNew;
    if (quiet >= idleMs || (quiet >= AT_END_QUIET_MS && reader.atEnd())) break;
  }
  await reader.close(10_000);
  return out;
}

/**
 * Outputs that repeat an earlier one (same key, same sum): what a batch processed twice from the same
 * committed state writes, and what an aborted transaction's outputs look like beside their rerun. A
 * doubled input instead gives new sums, none repeated.
 */
function repeatedOutputs(out: readonly FetchedRecord[]): string {
  const first = new Map<string, FetchedRecord>();
  const repeats: string[] = [];
  for (const r of out) {
    const id = `${String(r.key)}=${String(r.value)}`;
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, r);
    else repeats.push(`${id} at ${r.partition}:${r.offset} (first ${earlier.partition}:${earlier.offset})`);
  }
  return `${repeats.length} repeat an earlier output${repeats.length > 0 ? `, e.g. ${repeats.slice(0, 5).join(', ')}` : ''}`;
}

export function lastPerKey(records: FetchedRecord[]): Map<string, number> {
  return new Map(records.map((r) => [String(r.key), Number(String(r.value))]));
}

/**
 * The output has one record per input record and ends at each key's sum; so does the changelog.
 * With `input`, a wrong count also says how many records the input holds, which tells a doubled
 * input from a doubled output.
 */
export async function assertSums(
  bootstrap: string,
  output: string,
  group: string,
  count: number,
  input?: string,
): Promise<void> {
  let seen = 0;
  await waitFor(async () => (seen = (await readAll(bootstrap, output, 1_000, 20_000)).length) >= count, {
    timeoutMs: 180_000,
    intervalMs: 2_000,
    message: `${count} outputs`,
    observe: () => seen,
  });
  const expected = expectedSums(count);
  const out = await readAll(bootstrap, output);
  if (out.length !== count) {
    const inputs = input === undefined ? undefined : (await readAll(bootstrap, input)).length;
    assert.fail(
      `one output per input record: nothing lost, nothing doubled; ${out.length} outputs for ${count} inputs` +
        (inputs === undefined ? '' : ` (the input holds ${inputs} records)`) +
        `; ${repeatedOutputs(out)}`,
    );
  }
  assert.deepEqual(lastPerKey(out), expected, 'the last output per key is the sum of its inputs');
  const changelog = await readAll(bootstrap, changelogTopic(group, 'sums'));
  assert.deepEqual(lastPerKey(changelog), expected, 'the changelog holds each key at its sum');
}

/** The sum of a metric's values whose labels include `labels`. */
export async function metric(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((s, v) => s + v.value, 0);
}

/**
 * Builds exactly-once workers for the state tests (batches of 200, state under `root`) and keeps
 * each in `running`, so that the file's after() hook stops them all.
 */
export function stateWorkers(
  bootstrap: () => string,
  root: string,
  running: TransactionalWorker[],
): (stage: Stage, instance: string, over?: Partial<WorkerOptions>) => TransactionalWorker {
  return (stage, instance, over = {}) => {
    const w = new TransactionalWorker({
      stage,
      instanceId: instance,
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap()),
      batch: { size: 200, timeoutMs: 50 },
      state: { dir: root, replicationFactor: 1 },
      log: silentLogger(),
      ...over,
    });
    running.push(w);
    return w;
  };
}
