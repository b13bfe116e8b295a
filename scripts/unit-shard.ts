/**
 * Runs every `n`-th unit test file, from the `i`-th, in this one process:
 *   node --import tsx scripts/unit-shard.ts <i> <n> <files...>
 * Why: `node --test` starts a process per file, and with 136 files the starts (node, tsx, the
 * modules under test compiled again) cost as much as the tests. The unit tests share no state
 * between files (no env writes, no global mocks, no default metric registry), so one process per
 * core runs them all; the exit code is non-zero when any failed.
 * The next files are imported while the tests of the first ones run, so a file must compute in its
 * tests or in hooks inside a `describe`, never at import or in a top-level `before` (which joins the
 * root test and runs at once): 16 s of work at import stalled a health probe test until it timed out.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [index, count, ...files] = process.argv.slice(2);
const i = Number(index);
const n = Number(count);
if (!Number.isInteger(i) || !Number.isInteger(n) || n < 1 || i < 0 || i >= n || files.length === 0) {
  process.stderr.write('usage: unit-shard.ts <index> <count> <test files...>\n');
  process.exit(2);
}
for (const [k, file] of [...files].sort().entries()) {
  if (k % n === i) await import(pathToFileURL(resolve(file)).href);
}
