import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../../src/observability/logger.ts';
import { LocalCopy } from '../../../src/runtime/state/local-copy.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-local-copy-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('LocalCopy (LMDB)', () => {
  it('keeps changes and checkpoints across close and reopen, per store partition', async () => {
    const dir = join(root, 'a');
    const copy = LocalCopy.open(dir, silentLogger());
    await copy.write(
      [
        { store: 's', partition: 0, key: 'a', value: Buffer.from('1') },
        { store: 's', partition: 0, key: 'b', value: Buffer.from('2') },
        { store: 's', partition: 1, key: 'a', value: Buffer.from('x') },
      ],
      [{ store: 's', partition: 0, offset: 7 }],
      1234,
    );
    await copy.write([{ store: 's', partition: 0, key: 'a', value: null }], [], 1235);
    await copy.close();

    const again = LocalCopy.open(dir, silentLogger());
    assert.deepEqual(again.checkpoint('s', 0), { offset: 7, writtenAt: 1234 });
    assert.equal(again.checkpoint('s', 1), undefined);
    const p0 = again.base('s', 0);
    assert.equal(p0.count(), 1);
    assert.deepEqual(
      [...p0.range()].map(([k, v]) => [k, v.toString()]),
      [['b', '2']],
    );
    assert.equal(p0.get('a'), undefined);
    await again.wipe('s', 0);
    assert.equal(again.checkpoint('s', 0), undefined);
    assert.equal(again.base('s', 0).count(), 0);
    assert.equal(again.base('s', 1).get('a')?.toString(), 'x', 'wiping one partition leaves the others');
    assert.deepEqual(
      [...again.base('s', 1).range('a', 'b')].map(([k]) => k),
      ['a'],
    );
    await again.close();
  });
});
