#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (a runtime dependency): no build step.
import { relaunchWithThreadPool } from './threadpool.js';

if (!relaunchWithThreadPool()) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
