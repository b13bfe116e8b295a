/* global process */
/**
 * Runs a bench script in the process a relaunched `hamstring` would be (bin/threadpool.js: libuv's
 * pool of 16, 32 MB semi-spaces, jemalloc when the machine has it), so the bench measures what the
 * command runs:
 *
 *   node --import tsx bench/launch.js bench/pipeline.ts [options]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { relaunchWithThreadPool } from '../bin/threadpool.js';

if (!relaunchWithThreadPool()) {
  // The script then sees its own options from argv[2] on, as when started directly.
  const [script] = process.argv.splice(2, 1);
  if (script === undefined) throw new Error('usage: node --import tsx bench/launch.js <script> [options]');
  await import(pathToFileURL(resolve(script)).href);
}
