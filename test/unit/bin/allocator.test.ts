import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { allocatorEnv, forgetPreloadedAllocator } from '../../../bin/allocator.js';

const LIB = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
const only = (path: string) => (p: string) => p === path;

describe('the allocator a relaunched hamstring runs on', () => {
  it('preloads jemalloc with its default settings when the library is there', () => {
    const env = allocatorEnv({}, only(LIB));
    assert.equal(env.LD_PRELOAD, LIB);
    assert.equal(env.MALLOC_CONF, 'background_thread:true,dirty_decay_ms:30000');
  });

  it("keeps the user's own preloads and MALLOC_CONF", () => {
    const env = allocatorEnv({ LD_PRELOAD: '/opt/trace.so', MALLOC_CONF: 'narenas:2' }, only(LIB));
    assert.equal(env.LD_PRELOAD, `${LIB}:/opt/trace.so`);
    assert.equal(env.MALLOC_CONF, undefined, 'not overridden: the spread keeps the user value');
  });

  it('changes nothing without the library, or with HAMSTRING_MALLOC=system', () => {
    assert.deepEqual(
      allocatorEnv({}, () => false),
      {},
    );
    assert.deepEqual(allocatorEnv({ HAMSTRING_MALLOC: 'system' }, only(LIB)), {});
  });

  it("the relaunched process takes its preload and default MALLOC_CONF off its children's environment", () => {
    const mine = { LD_PRELOAD: '/opt/trace.so' };
    const env: NodeJS.ProcessEnv = { ...mine, ...allocatorEnv(mine, only(LIB)) };
    forgetPreloadedAllocator(env);
    assert.deepEqual(env, { LD_PRELOAD: '/opt/trace.so' });
    const theirs: NodeJS.ProcessEnv = { MALLOC_CONF: 'narenas:2' };
    const kept: NodeJS.ProcessEnv = { ...theirs, ...allocatorEnv(theirs, only(LIB)) };
    forgetPreloadedAllocator(kept);
    assert.deepEqual(kept, { MALLOC_CONF: 'narenas:2' });
  });

  it('a script started through bench/launch.js runs on jemalloc (when installed) and passes none of it on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocator-'));
    const script = join(dir, 'probe.mjs');
    writeFileSync(
      script,
      `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({
  jemalloc: readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'),
  pool: process.env.UV_THREADPOOL_SIZE,
  preload: process.env.LD_PRELOAD ?? null,
  conf: process.env.MALLOC_CONF ?? null,
}));`,
    );
    const { UV_THREADPOOL_SIZE: _pool, LD_PRELOAD: _preload, MALLOC_CONF: _conf, ...env } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, ['bench/launch.js', script], { env });
    const seen = JSON.parse(stdout) as { jemalloc: boolean; pool: string; preload: null; conf: null };
    const installed = allocatorEnv({}).LD_PRELOAD !== undefined;
    assert.deepEqual(seen, { jemalloc: installed, pool: '16', preload: null, conf: null });
  });
});
