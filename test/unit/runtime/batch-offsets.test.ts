import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextOffsets, partitionsOf } from '../../../src/runtime/batch-offsets.ts';

const r = (partition: number, offset: number, topic = 'in') => ({ topic, partition, offset });

describe('nextOffsets', () => {
  it('commits the last consumed offset + 1 per partition', () => {
    assert.deepEqual(nextOffsets([r(0, 10), r(1, 3), r(0, 11), r(1, 4), r(0, 12)]), [
      { topic: 'in', partition: 0, offset: 13 },
      { topic: 'in', partition: 1, offset: 4 + 1 },
    ]);
  });

  it('allows gaps: transaction markers and aborted records take offsets', () => {
    assert.deepEqual(nextOffsets([r(0, 5), r(0, 7), r(0, 20)]), [{ topic: 'in', partition: 0, offset: 21 }]);
  });

  it('keeps topics apart', () => {
    assert.deepEqual(nextOffsets([r(0, 1, 'a'), r(0, 9, 'b')]), [
      { topic: 'a', partition: 0, offset: 2 },
      { topic: 'b', partition: 0, offset: 10 },
    ]);
  });

  it('throws on decreasing offsets within a partition instead of committing past unprocessed records', () => {
    assert.throws(() => nextOffsets([r(0, 10), r(0, 9)]), /offsets out of order in in:0: 9 after 10/);
  });

  it('throws on a repeated offset within a partition', () => {
    assert.throws(() => nextOffsets([r(0, 10), r(0, 10)]), /out of order/);
  });

  it('commits nothing for an empty batch', () => {
    assert.deepEqual(nextOffsets([]), []);
  });
});

describe('partitionsOf', () => {
  it('lists each partition once, in first-seen order', () => {
    assert.deepEqual(partitionsOf([r(1, 0), r(0, 0), r(1, 1)]), [
      { topic: 'in', partition: 1 },
      { topic: 'in', partition: 0 },
    ]);
  });
});
