#!/usr/bin/env node
/* global process, URL */
// Runs the production bundle (dist/cli/main.js, `npm run build`) when it is newer than every file
// under src/, and the TypeScript sources through tsx (a runtime dependency) otherwise, so an edited
// source is never shadowed by a stale bundle. HAMSTRING_FROM=source or =build chooses.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { relaunchWithThreadPool } from './threadpool.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const bundle = join(root, 'dist', 'cli', 'main.js');

/** True when the bundle exists and no file under src/ changed after it was written. */
function bundleIsFresh() {
  if (!existsSync(bundle)) return false;
  const built = statSync(bundle).mtimeMs;
  const src = join(root, 'src');
  return readdirSync(src, { recursive: true }).every((f) => statSync(join(src, String(f))).mtimeMs <= built);
}

if (!relaunchWithThreadPool()) {
  const from = process.env.HAMSTRING_FROM ?? 'auto';
  if (!['auto', 'source', 'build'].includes(from))
    throw new Error(`HAMSTRING_FROM=${from}: expected source, build or auto`);
  if (from === 'build' ? true : from === 'auto' && bundleIsFresh()) {
    await import(pathToFileURL(bundle).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../src/cli/main.ts');
  }
}
