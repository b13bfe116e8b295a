import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../../src/dev/paths.ts';
import { HEAVY, LANES } from '../../../scripts/integration-lanes.ts';

test('every file the lane table and the heavy list name exists: a renamed test would silently lose its lane', () => {
  const missing = [...Object.keys(LANES), ...HEAVY].filter((f) => !existsSync(join(projectRoot, f)));
  assert.deepEqual(missing, []);
});
