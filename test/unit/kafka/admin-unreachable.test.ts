import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';

/** A loopback port nothing listens on: every connect of the client fails. */
const NOWHERE = '127.0.0.1:1';

test('an admin whose metadata connection failed (Kafka away) still closes without throwing', async () => {
  const admin = createAdmin(NOWHERE, 'admin-unreachable');
  const began = Date.now();
  await assert.rejects(admin.partitionCounts(['any'], 1_000));
  const failedAfter = Date.now() - began;
  assert.doesNotThrow(() => admin.close());
  // close() releases the client after its pending connect settles; an exception would surface here.
  await new Promise((r) => setTimeout(r, 200));
  // The call's 1 s bounds its connect too (the connect's own 10 s made this test wait 10 s).
  assert.ok(failedAfter < 5_000, `failed after ${failedAfter} ms, not about 1 s`);
});
