/**
 * One verification worker as a child process, so that SIGTERM and kill -9 are real. A pass-through
 * stage on the TransactionalWorker that tags every output with the attempt (process() call) that
 * made it, aborts about one transaction in `ABORT_RATIO` through `hooks.beforeCommit`, and reports
 * on stdout, one JSON line each: `ready`, `commit` (after a commit), `abort` (an injected abort,
 * written BEFORE the throw, so an attempt reported here is never committed).
 *
 * Env: BOOTSTRAP, INPUT, OUTPUT, GROUP, INSTANCE, BATCH_SIZE, BATCH_DELAY_MS (throttle per batch, until a
 * `full-speed` line on stdin),
 * ABORT_RATIO (0..1), SEED (abort dice), MAX_POLL_MS, STALL_MS (SIGUSR2: the next batch blocks the
 * event loop this long, past max.poll.interval), OVERSIZED_EVERY (every n-th sequence number is
 * output too large for Kafka, see oversized.ts; 0: none), KAFKA_* timeouts (see verifyKafkaOptions),
 * KAFKA_TRANSACTION_VERSION (1 or 2, default 2).
 */
import { createInterface } from 'node:readline';
import { syntheticKafkaError } from '../kafka/classify.ts';
import { createLogger } from '../observability/logger.ts';
import type { Stage } from '../runtime/stage.ts';
import { TransactionalWorker } from '../runtime/index.ts';
import { oversizedBytes, oversizedValue } from './oversized.ts';
import { mulberry32 } from './random.ts';
import { verifyKafkaOptions } from './settings.ts';
import type { WorkerEvent } from './worker-events.ts';

const env = (k: string, d?: string): string => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`missing env ${k}`);
  return v;
};
const emit = (e: WorkerEvent): void => void process.stdout.write(`${JSON.stringify(e)}\n`);

const input = env('INPUT');
const output = env('OUTPUT');
const group = env('GROUP');
const instance = env('INSTANCE', '0');
let delayMs = Number(env('BATCH_DELAY_MS', '0'));
const abortRatio = Number(env('ABORT_RATIO', '0'));
const stallMs = Number(env('STALL_MS', '0'));
const oversized = { every: Number(env('OVERSIZED_EVERY', '0')) };
const dice = mulberry32(Number(env('SEED', '1')) * 1_000_003 + Number(instance.replace(/\D/g, '') || 0));
// Attempt ids are unique across restarts of the same instance (pid) and across stages (group).
const attemptPrefix = `${group}/${instance}/${process.pid}`;
let attempt = 0;
let stallNext = false;

process.on('SIGUSR2', () => {
  stallNext = true;
});
// The verifier writes `full-speed` once its fault schedule is done: the throttle only spreads the
// input over the faults, and draining the rest at its pace would only make the run longer.
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'full-speed') delayMs = 0;
});

const stage: Stage = {
  name: group,
  inputTopics: [input],
  outputTopics: [output],
  async process(records) {
    attempt += 1;
    const id = `${attemptPrefix}/${attempt}`;
    if (stallNext) {
      stallNext = false;
      emit({ e: 'stall', at: Date.now(), ms: stallMs });
      // Deliberately synchronous: the event loop (and so the consumer's poll) stops, like a
      // CPU-bound stage, so librdkafka sees max.poll.interval.ms pass and leaves the group.
      const until = Date.now() + stallMs;
      while (Date.now() < until) {
        /* busy */
      }
    }
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    return {
      outputs: records.map((r) => {
        const seq = Number(r.value?.toString());
        const bytes = oversizedBytes(seq, oversized);
        return {
          topic: output,
          key: r.key,
          value: bytes === undefined ? r.value : oversizedValue(seq, bytes),
          headers: { ...r.headers, [`attempt.${group}`]: id },
          // Names the input record, so that an output Kafka refuses dead-letters that record alone.
          source: r,
        };
      }),
    };
  },
};

const transactionVersion = env('KAFKA_TRANSACTION_VERSION', '2');
if (transactionVersion !== '1' && transactionVersion !== '2')
  throw new Error(`KAFKA_TRANSACTION_VERSION must be 1 or 2, got ${transactionVersion}`);
const kafka = verifyKafkaOptions(env('BOOTSTRAP'), {
  maxPollIntervalMs: Number(env('MAX_POLL_MS', '30000')),
  transactionVersion: transactionVersion === '2' ? 2 : 1,
});
const worker = new TransactionalWorker({
  stage,
  instanceId: instance,
  mode: 'exactly-once',
  kafka,
  batch: { size: Number(env('BATCH_SIZE', '100')), timeoutMs: 50 },
  // The verdict is about the transactions alone; no stage here fails a record, so no bounded redelivery.
  attemptStore: false,
  log: createLogger({ verify: 'worker' }, 2),
  hooks: {
    beforeCommit: () => {
      if (abortRatio > 0 && dice() < abortRatio) {
        emit({ e: 'abort', at: Date.now(), attempt: `${attemptPrefix}/${attempt}` });
        throw syntheticKafkaError('_STATE', 'commit-transaction', { isTxnRequiresAbort: true });
      }
    },
    afterCommit: ({ records }) => {
      emit({ e: 'commit', at: Date.now(), records, attempt: `${attemptPrefix}/${attempt}` });
    },
    onRecovery: ({ situation, code, kind, operation, action }) => {
      emit({
        e: 'recovery',
        at: Date.now(),
        what: `${situation ?? 'loop'} ${code} (${kind}) on ${operation} -> ${action}`,
      });
    },
  },
});
process.on('SIGTERM', () => {
  void worker.stop().then(() => {
    emit({ e: 'stopped', at: Date.now() });
    process.exit(0);
  });
});
await worker.start();
emit({ e: 'ready', at: Date.now() });
// The liveness probe a supervisor (Kubernetes) would run: a worker that is not live any more reports
// `unhealthy` and dies, and the verifier restarts it like a supervisor and reports it. SIGKILL, not
// process.exit: exit joins libuv's thread pool, and a hung worker's pool threads are stuck inside
// librdkafka calls that never return, so process.exit would hang as well.
setInterval(() => {
  const s = worker.status();
  if (!s.live && s.state !== 'stopping' && s.state !== 'stopped') {
    emit({ e: 'unhealthy', at: Date.now(), state: s.state, lastLoopAt: s.lastLoopAt });
    process.kill(process.pid, 'SIGKILL');
  }
}, 5_000).unref();
await worker.done();
emit({ e: 'stopped', at: Date.now(), failure: worker.status().failure });
process.exit(worker.status().state === 'failed' ? 1 : 0);
