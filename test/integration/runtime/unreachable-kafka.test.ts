import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createProducer } from '../../../src/kafka/producer.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { passThroughStage, testKafkaOptions } from '../../support/pipeline-harness.ts';
import { captureLog } from '../../helpers/capture-log.ts';

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts a worker against `bootstrap`; returns its first line naming the address, and when it came. */
async function firstWords(bootstrap: string) {
  const { log, lines } = captureLog();
  const worker = new TransactionalWorker({
    stage: passThroughStage('in', 'out'),
    instanceId: 'w0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: 3_000 }),
    batch: { size: 10, timeoutMs: 100 },
    log,
  });
  const t0 = Date.now();
  const starting = worker.start();
  try {
    const named = () => lines.find((l) => l.level === 40 && String(l.msg).includes(bootstrap));
    await waitFor(() => named() !== undefined, {
      timeoutMs: 5_000,
      message: `a warning naming ${bootstrap}`,
    });
    const afterMs = Date.now() - t0;
    await waitFor(() => worker.status().notReady?.includes(bootstrap) === true, {
      timeoutMs: 5_000,
      message: 'a reason not ready',
    });
    return { line: named()!, afterMs, notReady: worker.status().notReady ?? '' };
  } finally {
    await starting;
    await worker.stop();
  }
}

/** Starts a bare producer against `bootstrap`; returns its first connection warning and when it came. */
async function firstConnectionWarning(bootstrap: string) {
  const { log, lines } = captureLog();
  const t0 = Date.now();
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'unreachable',
      transactionTimeoutMs: 10_000,
      messageTimeoutMs: 5_000,
      apiTimeoutMs: 5_000,
    },
    log,
  );
  const connecting = producer.connect(5_000).catch(() => undefined);
  try {
    await waitFor(() => lines.some((l) => l.event === 'kafka-unreachable'), {
      timeoutMs: 5_000,
      message: 'a connection warning',
    });
    const line = lines.find((l) => l.event === 'kafka-unreachable')!;
    return { line, afterMs: Date.now() - t0, problem: producer.connectionProblem?.() };
  } finally {
    await connecting;
    await producer.close(1_000);
  }
}

describe('a worker whose Kafka cannot be reached says why, naming the address', () => {
  test('a host name that does not resolve', async () => {
    const { line, afterMs, notReady } = await firstWords('no-such-host.invalid:9092');
    assert.match(String(line.msg), /does not resolve/);
    assert.ok(afterMs < 1_000, `named after ${afterMs} ms`);
    assert.match(notReady, /no-such-host\.invalid:9092/);
    assert.match(notReady, /_RESOLVE/);
  });

  test('a closed port', async () => {
    const port = await closedPort();
    const { line, afterMs, notReady } = await firstWords(`127.0.0.1:${port}`);
    assert.match(String(line.msg), /_TRANSPORT|connection refused/);
    assert.ok(afterMs < 1_000, `named after ${afterMs} ms`);
    assert.match(notReady, new RegExp(`127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(notReady, /_RESOLVE/);
  });
});

// The worker's words above come from its start-up check; these come from librdkafka's own failed
// attempts, as a client (here a bare producer) sees them while the address stays unreachable.
describe('an unreachable bootstrap server is named with its cause (real librdkafka client)', () => {
  test('a host name that does not resolve: _RESOLVE with the address, within a second', async () => {
    const { line, afterMs, problem } = await firstConnectionWarning('no-such-host.invalid:9092');
    assert.match(
      String(line.msg),
      /host name does not resolve \(_RESOLVE\): bootstrap no-such-host\.invalid:9092/,
    );
    assert.ok(afterMs < 1_000, `first warning after ${afterMs} ms`);
    assert.equal(problem?.code, '_RESOLVE');
    assert.equal(problem?.address, 'no-such-host.invalid:9092');
  });

  test('a closed port: _TRANSPORT with the address and the refusal, within a second', async () => {
    const port = await closedPort();
    const { line, afterMs, problem } = await firstConnectionWarning(`127.0.0.1:${port}`);
    assert.match(
      String(line.msg),
      new RegExp(`cannot connect \\(_TRANSPORT\\): bootstrap 127\\.0\\.0\\.1:${port}`),
    );
    assert.match(String((line.err as { message: string }).message), /refused/i);
    assert.ok(afterMs < 1_000, `first warning after ${afterMs} ms`);
    assert.equal(problem?.code, '_TRANSPORT');
  });
});
