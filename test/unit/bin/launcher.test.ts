import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { allocatorEnv } from '../../../bin/allocator.js';
import { relaunchEnv, YOUNG_GENERATION_FLAG } from '../../../bin/threadpool.js';
import { exited } from '../../support/spawn-worker.ts';

const LAUNCHER = resolve('bin/hamstring');
const dir = mkdtempSync(join(tmpdir(), 'hamstring-launcher-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The caller's environment without what the launcher sets, so each case starts from nothing. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const {
    UV_THREADPOOL_SIZE: _pool,
    LD_PRELOAD: _preload,
    MALLOC_CONF: _conf,
    NODE_OPTIONS: _options,
    HAMSTRING_MALLOC: _malloc,
    ...env
  } = process.env;
  return { ...env, ...extra };
}

/**
 * A `node` first on PATH that writes what it was started with: the launcher's environment and
 * arguments, compared with what bin/threadpool.js gives a relaunched child on this machine.
 */
const fakeBin = join(dir, 'fake-bin');
mkdirSync(fakeBin);
writeFileSync(
  join(fakeBin, 'node'),
  `#!/bin/sh\n${JSON.stringify(process.execPath)} -e 'console.log(JSON.stringify({ args: process.argv.slice(1), env: process.env }))' -- "$@"\n`,
);
chmodSync(join(fakeBin, 'node'), 0o755);

async function launched(
  command: string,
  env: NodeJS.ProcessEnv,
): Promise<{ args: string[]; env: NodeJS.ProcessEnv }> {
  const { stdout } = await promisify(execFile)(command, ['run', 'collector'], {
    env: { ...env, PATH: `${fakeBin}:${env.PATH ?? ''}` },
  });
  return JSON.parse(stdout) as { args: string[]; env: NodeJS.ProcessEnv };
}

/** The variables the launcher and bin/threadpool.js may set. */
const SET = [
  'UV_THREADPOOL_SIZE',
  'LD_PRELOAD',
  'MALLOC_CONF',
  'HAMSTRING_PRELOADED_ALLOCATOR',
  'HAMSTRING_PRELOADED_MALLOC_CONF',
];
const picked = (env: NodeJS.ProcessEnv) => Object.fromEntries(SET.map((k) => [k, env[k]]));

describe('bin/hamstring, the command npm installs', () => {
  it('gives node the environment and flag a relaunched hamstring gets, and the real bin/hamstring.js', async () => {
    for (const extra of [
      {},
      { HAMSTRING_MALLOC: 'system' },
      { LD_PRELOAD: '/opt/trace.so', MALLOC_CONF: 'narenas:2' },
      { UV_THREADPOOL_SIZE: '8' },
    ]) {
      const env = bareEnv(extra);
      const seen = await launched(LAUNCHER, env);
      const expected = extra.UV_THREADPOOL_SIZE ? { ...env, ...allocatorEnv(env) } : relaunchEnv(env);
      assert.deepEqual(picked(seen.env), picked(expected), JSON.stringify(extra));
      assert.deepEqual(seen.args, [YOUNG_GENERATION_FLAG, resolve('bin/hamstring.js'), 'run', 'collector']);
    }
  });

  it('leaves the semi-space size to NODE_OPTIONS when it names one', async () => {
    const seen = await launched(LAUNCHER, bareEnv({ NODE_OPTIONS: '--max-semi-space-size=8' }));
    assert.deepEqual(seen.args, [resolve('bin/hamstring.js'), 'run', 'collector']);
  });

  it('finds bin/hamstring.js through the symlinks npm makes (node_modules/.bin)', async () => {
    const links = join(dir, 'node_modules', '.bin');
    mkdirSync(links, { recursive: true });
    symlinkSync(join('..', '..', 'hamstring-link'), join(links, 'hamstring'));
    symlinkSync(LAUNCHER, join(dir, 'hamstring-link'));
    const seen = await launched(join(links, 'hamstring'), bareEnv());
    assert.equal(seen.args[1], resolve('bin/hamstring.js'));
  });

  it('a started hamstring run is one node process, the command itself: pool 16, jemalloc mapped when installed', async () => {
    const probe = join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `import { readFileSync } from 'node:fs';
export default () => {
  console.log(JSON.stringify({
    pid: process.pid,
    ppid: process.ppid,
    pool: process.env.UV_THREADPOOL_SIZE,
    jemalloc: readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'),
    flags: process.execArgv,
    preload: process.env.LD_PRELOAD ?? null,
  }));
  return new Promise(() => {});
};
`,
    );
    const child = spawn(LAUNCHER, ['run', probe, '--config', 'examples/uppercase.yaml'], {
      env: bareEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((done) =>
      createInterface({ input: child.stdout }).once('line', done),
    );
    const seen = JSON.parse(line) as Record<string, unknown>;
    const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    child.kill('SIGTERM');
    await exited(child);
    assert.deepEqual(seen, {
      pid: child.pid,
      ppid: process.pid,
      pool: '16',
      jemalloc: allocatorEnv({}).LD_PRELOAD !== undefined,
      flags: [YOUNG_GENERATION_FLAG],
      // Taken off again, so the processes hamstring starts do not inherit it.
      preload: null,
    });
    assert.deepEqual(
      children.filter((c) => c.includes('hamstring')),
      [],
      'no hamstring process below the command',
    );
  });

  it('exits with the status node exits with', async () => {
    const probe = join(dir, 'exit.mjs');
    writeFileSync(probe, 'export default () => process.exit(7);\n');
    const child = spawn(LAUNCHER, ['run', probe, '--config', 'examples/uppercase.yaml'], {
      env: bareEnv(),
      stdio: 'ignore',
    });
    await exited(child);
    assert.equal(child.exitCode, 7);
  });
});
