import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';

describe('test names', () => {
  test('are unique, carry the prefix and the pid, and are valid Kafka names', () => {
    const names = [uniqueTopic('in'), uniqueTopic('in'), uniqueGroup('g'), uniqueTransactionalId('t')];
    assert.equal(new Set(names).size, names.length);
    assert.ok(names[0]!.startsWith(`in-${process.pid}-`));
    for (const name of names) assert.match(name, /^[a-zA-Z0-9-]+$/);
    assert.match(uniqueTopic('odd name/with.dots'), /^odd-name-with-dots-/);
  });
});

describe('waitFor', () => {
  test('resolves as soon as the condition holds', async () => {
    let calls = 0;
    await waitFor(() => ++calls >= 3, { timeoutMs: 5000, intervalMs: 1, message: 'three calls' });
    assert.equal(calls, 3);
  });

  test('awaits async conditions and treats a throw as "not yet"', async () => {
    let calls = 0;
    await waitFor(
      () => {
        calls += 1;
        if (calls < 2) throw new Error('not connected');
        return Promise.resolve(true);
      },
      { timeoutMs: 5000, intervalMs: 1, message: 'connect' },
    );
  });

  test('rejects at the deadline with the message, the last result and the observed state', async () => {
    await assert.rejects(
      waitFor(() => false, {
        timeoutMs: 30,
        intervalMs: 5,
        message: 'records arrive',
        observe: () => ({ count: 2 }),
      }),
      /timed out after 30 ms waiting for: records arrive \(condition returned false; observed: \{"count":2\}\)/,
    );
    await assert.rejects(
      waitFor(
        () => {
          throw new Error('refused');
        },
        { timeoutMs: 20, intervalMs: 5, message: 'broker' },
      ),
      /condition threw refused/,
    );
  });
});
