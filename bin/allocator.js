import { existsSync } from 'node:fs';

/**
 * Where Debian's libjemalloc2 puts the library, per architecture. Looked up rather than resolved
 * through the loader: a missing library must mean "run on glibc's malloc", not a failed start.
 */
const JEMALLOC_PATHS = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
];

/**
 * Purging happens on jemalloc's own thread, and freed pages stay 30 s before they go back to the
 * kernel: with the default (10 s, purged by the allocating thread) the main thread spent 2.5 % of
 * its time zeroing pages it had just given back.
 */
const DEFAULT_MALLOC_CONF = 'background_thread:true,dirty_decay_ms:30000';

/** Names the preloaded library for the relaunched process, which takes it off its children's preload. */
const MARKER = 'HAMSTRING_PRELOADED_ALLOCATOR';
/** Set when MALLOC_CONF is this launcher's default, so the relaunched process removes it too. */
const CONF_MARKER = 'HAMSTRING_PRELOADED_MALLOC_CONF';

/**
 * The environment additions that make a relaunched hamstring process allocate with jemalloc:
 * glibc's malloc was the largest single item of a busy pipeline's main thread (about 11 % in
 * `perf`: bin management and consolidation for the Kafka client's per-record buffers), jemalloc's
 * about 5 % with the page faults it adds. `HAMSTRING_MALLOC=system` keeps glibc's; without the
 * library (package libjemalloc2) nothing changes.
 *
 * @param {NodeJS.ProcessEnv} env
 * @param {(path: string) => boolean} [exists]
 * @returns {Record<string, string>}
 */
export function allocatorEnv(env, exists = existsSync) {
  if (env.HAMSTRING_MALLOC === 'system') return {};
  const library = JEMALLOC_PATHS.find((path) => exists(path));
  if (library === undefined) return {};
  const preload = env.LD_PRELOAD ? `${library}:${env.LD_PRELOAD}` : library;
  const conf = env.MALLOC_CONF === undefined ? { MALLOC_CONF: DEFAULT_MALLOC_CONF, [CONF_MARKER]: '1' } : {};
  return { LD_PRELOAD: preload, [MARKER]: library, ...conf };
}

/**
 * In the relaunched process: the library is loaded now, and the processes this one starts (a
 * broker, ClickHouse, which brings its own jemalloc) must not inherit it.
 *
 * @param {NodeJS.ProcessEnv} env
 */
export function forgetPreloadedAllocator(env) {
  const library = env[MARKER];
  if (library === undefined) return;
  const rest = (env.LD_PRELOAD ?? '').split(':').filter((p) => p !== '' && p !== library);
  if (rest.length > 0) env.LD_PRELOAD = rest.join(':');
  else delete env.LD_PRELOAD;
  delete env[MARKER];
  if (env[CONF_MARKER] !== undefined) delete env.MALLOC_CONF;
  delete env[CONF_MARKER];
}
