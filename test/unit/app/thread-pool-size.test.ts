import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';

const BLOCKED = 6;
const dir = mkdtempSync(join(tmpdir(), 'hamstring-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A "stage module" whose factory measures the real libuv pool: opening a FIFO for reading holds a
 * pool thread until a writer comes, so a stat() still completes only if the pool has more threads.
 */
function probeModule(): { path: string; fifos: string[] } {
  const fifos = Array.from({ length: BLOCKED }, (_, i) => join(dir, `fifo-${process.hrtime.bigint()}-${i}`));
  execFileSync('mkfifo', fifos);
  const path = join(dir, `probe-${process.hrtime.bigint()}.mjs`);
  writeFileSync(
    path,
    `import { open, stat } from 'node:fs/promises';
export default async () => {
  for (const f of ${JSON.stringify(fifos)}) void open(f, 'r');
  const free = await Promise.race([stat('/').then(() => true), new Promise((r) => setTimeout(() => r(false), 2000))]);
  console.log(JSON.stringify({ env: process.env.UV_THREADPOOL_SIZE, moreThan${BLOCKED}: free }));
  process.exit(0);
};
`,
  );
  return { path, fifos };
}

async function poolOf(env: NodeJS.ProcessEnv): Promise<unknown> {
  const { path, fifos } = probeModule();
  const child = spawn(
    process.execPath,
    ['bin/hamstring.js', 'run', path, '--config', 'examples/uppercase.yaml'],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout }).once('line', resolve),
  );
  // Threads blocked in open() are joined at exit: give each FIFO a writer so the probe can end. Once
  // the last open() returned, the probe may exit before a write: EPIPE then only says it is gone.
  for (const f of fifos) {
    try {
      writeFileSync(f, 'x');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EPIPE') throw e;
    }
  }
  await exited(child);
  return JSON.parse(line);
}

const withoutPoolSize = () => {
  const env = { ...process.env };
  delete env.UV_THREADPOOL_SIZE;
  return env;
};

test('hamstring started without UV_THREADPOOL_SIZE runs with a real pool of 16 threads (it relaunches itself)', async () => {
  assert.deepEqual(await poolOf(withoutPoolSize()), { env: '16', moreThan6: true });
});

test('the probe sees a small pool: a UV_THREADPOOL_SIZE given by the caller is kept', async () => {
  assert.deepEqual(await poolOf({ ...withoutPoolSize(), UV_THREADPOOL_SIZE: '4' }), {
    env: '4',
    moreThan6: false,
  });
});

test('the relaunched process dies with the command killed by SIGKILL', async () => {
  const path = join(dir, 'forever.mjs');
  writeFileSync(path, 'export default () => { console.log(process.pid); return new Promise(() => {}); };\n');
  const parent = spawn(
    process.execPath,
    ['bin/hamstring.js', 'run', path, '--config', 'examples/uppercase.yaml'],
    {
      env: withoutPoolSize(),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const childPid = Number(
    await new Promise<string>((resolve) => createInterface({ input: parent.stdout }).once('line', resolve)),
  );
  assert.notEqual(childPid, parent.pid, 'the work runs in a relaunched child');
  parent.kill('SIGKILL');
  await exited(parent);
  const alive = () => {
    try {
      process.kill(childPid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await waitFor(() => !alive(), { timeoutMs: 10_000, message: `relaunched child ${childPid} gone` });
});
