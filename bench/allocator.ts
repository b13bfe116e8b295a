import { readFileSync } from 'node:fs';

/** Which malloc this process runs on: jemalloc when its library is mapped (preloaded), else glibc's. */
export function allocatorInUse(): string {
  try {
    return readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc') ? 'jemalloc' : 'glibc malloc';
  } catch {
    return 'unknown';
  }
}
