import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { passThroughStage, testKafkaOptions } from '../../support/pipeline-harness.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts a worker against `bootstrap`; returns its first line naming the address, and when it came. */
async function firstWords(bootstrap: string) {
  const { log, lines } = capture();
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
