import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ThreadPool, ThreadPoolClosedError } from '../../../src/runtime/thread-pool.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** Task inputs the fixture module understands. */
type Op =
  | { op: 'spin'; ms: number; startedFile?: string }
  | { op: 'hold'; ms: number }
  | { op: 'fail' }
  | { op: 'throw-string' }
  | { op: 'echo'; value: unknown };

interface Span {
  threadId: number;
  start: number;
  end: number;
}

// A TypeScript task module (type annotations, a class field) proves the thread loads .ts itself.
const FIXTURE = `
import { writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

class ValidationError extends Error {
  override readonly name: string = 'ValidationError';
  readonly code: string = 'E_BAD_DOMAIN';
}

export default async function task(input: { op: string; ms?: number; value?: unknown; startedFile?: string }): Promise<unknown> {
  const start = Date.now();
  switch (input.op) {
    case 'spin': {
      if (input.startedFile) writeFileSync(input.startedFile, String(threadId));
      let n = 0;
      while (Date.now() - start < (input.ms ?? 0)) n += 1;
      return { threadId, start, end: Date.now(), n };
    }
    case 'hold':
      await new Promise((r) => setTimeout(r, input.ms));
      return { threadId, start, end: Date.now() };
    case 'fail':
      throw new ValidationError('domain label too long');
    case 'throw-string':
      throw 'plain string';
    default:
      return input.value;
  }
}
`;

const RUNNER = (poolUrl: string, fixtureUrl: string) => `
import { ThreadPool } from ${JSON.stringify(poolUrl)};
const pool = new ThreadPool({ module: new URL(${JSON.stringify(fixtureUrl)}) });
const out = await pool.run<{ op: string; value: unknown }, unknown>({ op: 'echo', value: { n: 7 } });
process.stdout.write(JSON.stringify(out));
// No close(): idle threads must not keep the process alive.
`;

const run = promisify(execFile);
let dir: string;
let fixture: URL;

async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('ThreadPool', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'hamstring-pool-'));
    // Like the repository's own modules: .ts files in an ESM package.
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(dir, 'task.ts'), FIXTURE);
    fixture = pathToFileURL(join(dir, 'task.ts'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the main event loop ticking while a task burns CPU for 2 s', async () => {
    const pool = new ThreadPool({ module: fixture, size: 1 });
    try {
      // Warm the thread first so its start-up (tsx, module load) does not count as drift.
      await pool.run<Op, unknown>({ op: 'echo', value: 0 });
      const period = 20;
      let last = performance.now();
      let maxDrift = 0;
      let ticks = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        maxDrift = Math.max(maxDrift, now - last - period);
        last = now;
        ticks += 1;
      }, period);
      const span = await pool.run<Op, Span>({ op: 'spin', ms: 2_000 });
      clearInterval(timer);
      assert.ok(span.end - span.start >= 2_000);
      assert.ok(ticks >= 50, `only ${ticks} ticks in 2 s`);
      assert.ok(maxDrift < 200, `event loop drifted ${maxDrift.toFixed(0)} ms`);
    } finally {
      await pool.close();
    }
  });

  it('rejects with the signal reason and terminates a running CPU-bound task promptly', async () => {
    const pool = new ThreadPool({ module: fixture, size: 1 });
    try {
      const first = await pool.run<Op, Span>({ op: 'hold', ms: 0 });
      const controller = new AbortController();
      const reason = new Error('batch became stale');
      const running = pool.run<Op, Span>({ op: 'spin', ms: 30_000 }, controller.signal);
      setTimeout(() => controller.abort(reason), 300);
      const t0 = Date.now();
      await assert.rejects(within(2_000, running), (e) => e === reason);
      assert.ok(Date.now() - t0 < 1_000, 'abort took too long');
      // The thread was replaced: the next task runs, on a new thread.
      const next = await within(10_000, pool.run<Op, Span>({ op: 'hold', ms: 0 }));
      assert.notEqual(next.threadId, first.threadId);
      assert.equal(pool.threads, 1);
    } finally {
      await pool.close();
    }
  });

  it('removes an aborted task from the queue without disturbing the running one', async () => {
    const pool = new ThreadPool({ module: fixture, size: 1 });
    try {
      const running = pool.run<Op, Span>({ op: 'hold', ms: 300 });
      const controller = new AbortController();
      const queued = pool.run<Op, Span>({ op: 'hold', ms: 0 }, controller.signal);
      controller.abort();
      await assert.rejects(queued, { name: 'AbortError' });
      // The running task ends by itself on its thread, which stays: no replacement as for a running abort.
      // (Its measured length is not asserted: under load the thread's timer can fire before
      // Date.now() says 300 ms have passed, as libuv's cached loop time lags.)
      const span = await running;
      const next = await pool.run<Op, Span>({ op: 'hold', ms: 0 });
      assert.equal(next.threadId, span.threadId);
      assert.equal(pool.threads, 1);
    } finally {
      await pool.close();
    }
  });

  it('rejects at once when the signal is already aborted', async () => {
    const pool = new ThreadPool({ module: fixture });
    try {
      const reason = new Error('too late');
      await assert.rejects(
        pool.run({ op: 'echo', value: 1 }, AbortSignal.abort(reason)),
        (e) => e === reason,
      );
      assert.equal(pool.threads, 0);
    } finally {
      await pool.close();
    }
  });

  it('propagates a task error with its name, message, code and stack', async () => {
    const pool = new ThreadPool({ module: fixture });
    try {
      await assert.rejects(pool.run<Op, never>({ op: 'fail' }), (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.equal(e.name, 'ValidationError');
        assert.equal(e.message, 'domain label too long');
        assert.equal((e as Error & { code?: string }).code, 'E_BAD_DOMAIN');
        assert.match(e.stack ?? '', /task\.ts/);
        return true;
      });
      await assert.rejects(pool.run<Op, never>({ op: 'throw-string' }), {
        name: 'Error',
        message: 'plain string',
      });
      // The thread survives task errors.
      assert.deepEqual(await pool.run<Op, unknown>({ op: 'echo', value: [1, 'a'] }), [1, 'a']);
    } finally {
      await pool.close();
    }
  });

  it('runs at most `size` tasks at once, each thread started once', async () => {
    const pool = new ThreadPool({ module: fixture, size: 3 });
    try {
      const spans = await Promise.all(
        Array.from({ length: 9 }, () => pool.run<Op, Span>({ op: 'hold', ms: 200 })),
      );
      const events = spans.flatMap((s) => [
        { at: s.start, d: 1 },
        { at: s.end, d: -1 },
      ]);
      events.sort((a, b) => a.at - b.at || a.d - b.d);
      let open = 0;
      let maxOpen = 0;
      for (const e of events) maxOpen = Math.max(maxOpen, (open += e.d));
      assert.equal(maxOpen, 3);
      assert.equal(new Set(spans.map((s) => s.threadId)).size, 3);
      assert.equal(pool.threads, 3);
    } finally {
      await pool.close();
    }
  });

  it('defaults to at most two threads', () => {
    const pool = new ThreadPool({ module: fixture });
    assert.ok(pool.size >= 1 && pool.size <= 2);
    void pool.close();
  });

  it('rejects queued and running tasks on close', async () => {
    const pool = new ThreadPool({ module: fixture, size: 1 });
    const startedFile = join(dir, 'close-while-running.started');
    const running = pool.run<Op, Span>({ op: 'spin', ms: 30_000, startedFile });
    const queued = pool.run<Op, Span>({ op: 'echo', value: 1 });
    const rejected = Promise.all([
      assert.rejects(running, ThreadPoolClosedError),
      assert.rejects(queued, ThreadPoolClosedError),
    ]);
    // close() must find the task running on its thread, not still queued.
    await waitFor(() => existsSync(startedFile), { timeoutMs: 10_000, message: 'the spin task started' });
    await within(5_000, pool.close());
    await rejected;
    await assert.rejects(pool.run({ op: 'echo', value: 1 }), ThreadPoolClosedError);
  });

  it('reports a module without a default export function on every run', async () => {
    writeFileSync(join(dir, 'no-default.ts'), 'export const x: number = 1;\n');
    const pool = new ThreadPool({ module: join(dir, 'no-default.ts'), size: 1 });
    try {
      await assert.rejects(pool.run(1), /has no default export function/);
      await assert.rejects(pool.run(2), /has no default export function/);
    } finally {
      await pool.close();
    }
  });

  it('rejects an input that cannot be cloned and keeps the thread usable', async () => {
    const pool = new ThreadPool({ module: fixture, size: 1 });
    try {
      await assert.rejects(pool.run({ op: 'echo', value: () => 1 }), { name: 'DataCloneError' });
      assert.equal(await pool.run<Op, number>({ op: 'echo', value: 5 }), 5);
    } finally {
      await pool.close();
    }
  });

  it('loads TypeScript tasks when the process registered tsx through its API (bin/hamstring.js)', async () => {
    const runner = join(dir, 'runner.ts');
    const poolUrl = new URL('../../../src/runtime/thread-pool.ts', import.meta.url).href;
    writeFileSync(runner, RUNNER(poolUrl, fixture.href));
    const script = `import { register } from 'tsx/esm/api'; register(); await import(${JSON.stringify(
      pathToFileURL(runner).href,
    )});`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../../../', import.meta.url),
      timeout: 30_000,
    });
    assert.deepEqual(JSON.parse(stdout), { n: 7 });
  });
});
