#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (a runtime dependency): no build step.
import './threadpool.js';
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
