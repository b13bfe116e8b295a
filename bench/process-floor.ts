/**
 * What six stage processes take before any HAMSTRING code runs: N processes (default 6) that hold
 * nothing (`bare`: node itself), then N that hold only what every stage process must hold, the Kafka
 * client with a transactional producer and a consumer in a group (`clients`), each started as
 * `bin/hamstring` starts a stage (jemalloc preloaded, unless `HAMSTRING_MALLOC=system`). Once all are
 * ready and have idled `--settle` seconds it prints each set's RSS (anonymous and file-backed), summed
 * and per process, and the sum of their PSS (node's binary and libraries counted once). Beside
 * `bench:memory`'s six idle stages and its replay peak, it says how much of those figures any stage
 * process pays and how much is HAMSTRING's. Prints figures, asserts nothing.
 *
 *   node --import tsx bench/process-floor.ts [--processes 6] [--settle 15] [--port 27192] [--keep-broker]
 *   npm run bench:process-floor
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { allocatorEnv } from '../bin/allocator.js';
import { obtainBroker } from './bench-broker.ts';
import { procPssBytes, procRss } from './proc-rss.ts';

const { values: args } = parseArgs({
  options: {
    processes: { type: 'string', default: '6' },
    settle: { type: 'string', default: '15' },
    port: { type: 'string', default: '27192' },
    'keep-broker': { type: 'boolean', default: false },
  },
});
const COUNT = Number(args.processes);
const SETTLE_MS = Number(args.settle) * 1000;
const CHILD = fileURLToPath(new URL('process-floor-child.js', import.meta.url));
const MiB = 1024 * 1024;

const log = (m: string) => console.log(m);
const broker = await obtainBroker(Number(args.port), args['keep-broker'], log);
const env = { ...process.env, ...allocatorEnv(process.env) };
log(`allocator: ${env.LD_PRELOAD?.includes('jemalloc') ? 'jemalloc' : 'glibc malloc'}`);

try {
  for (const mode of ['bare', 'clients'] as const) {
    const children = Array.from({ length: COUNT }, (_, i) =>
      spawn(process.execPath, [CHILD, mode, broker.bootstrap, String(i)], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    try {
      await Promise.all(children.map(ready));
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      report(mode, children);
    } finally {
      for (const child of children) child.kill('SIGKILL');
    }
  }
} finally {
  await broker.release();
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`a ${CHILD} process exited (${code}) before it was ready`)),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
  });
}

function report(mode: string, children: readonly ChildProcess[]): void {
  const rss = children.map((child) => procRss(child.pid!));
  const sum = (key: 'rss' | 'anon' | 'file') => rss.reduce((total, r) => total + r[key], 0) / MiB;
  const pss = children.reduce((total, child) => total + procPssBytes(child.pid!), 0) / MiB;
  const each = rss.map((r) => (r.rss / MiB).toFixed(0)).join(' ');
  log(
    `${mode.padEnd(8)} ${COUNT} processes: RSS ${sum('rss').toFixed(0)} MiB ` +
      `(anonymous ${sum('anon').toFixed(0)}, file-backed ${sum('file').toFixed(0)}), ` +
      `PSS ${pss.toFixed(0)} MiB; each ${each} MiB`,
  );
}
