import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repeatLimitHooks } from '../../../src/observability/logger.ts';
import { RepeatFilter } from '../../../src/observability/repeat-filter.ts';
import { captureLog } from '../../helpers/capture-log.ts';

/** A pino logger with the repeat limit over a manual clock, writing parsed lines into `lines`. */
function capture(intervalMs: number) {
  let now = 0;
  const { log, lines } = captureLog({ level: 'debug', hooks: repeatLimitHooks(intervalMs, () => now) });
  return { log, lines, advance: (ms: number) => (now += ms) };
}

describe('RepeatFilter', () => {
  it('writes the first line, counts repeats within the interval, and reports the count with the next', () => {
    let now = 0;
    const f = new RepeatFilter({ intervalMs: 1_000, maxKeys: 10, now: () => now });
    assert.deepEqual(f.decide('a'), { emit: true, suppressed: 0 });
    now = 100;
    assert.deepEqual(f.decide('a'), { emit: false });
    now = 300;
    assert.deepEqual(f.decide('a'), { emit: false });
    assert.deepEqual(f.decide('b'), { emit: true, suppressed: 0 });
    now = 1_000;
    assert.deepEqual(f.decide('a'), { emit: true, suppressed: 2, sinceMs: 900 });
  });

  it('forgets the oldest line beyond maxKeys, so memory stays bounded', () => {
    const f = new RepeatFilter({ intervalMs: 1_000, maxKeys: 2, now: () => 0 });
    f.decide('a');
    f.decide('b');
    f.decide('c');
    assert.deepEqual(f.decide('a'), { emit: true, suppressed: 0 });
    assert.deepEqual(f.decide('c'), { emit: false });
  });
});

describe('logger repeat limit', () => {
  it('writes a warning loop once per interval with the number of lines it suppressed', () => {
    const { log, lines, advance } = capture(10_000);
    const child = log.child({ stage: 'detector' });
    for (let i = 0; i < 1_000; i += 1) {
      child.warn({ event: 'recovery', err: { code: 'MSG_SIZE_TOO_LARGE' }, attempt: i }, 'kafka: recovering');
      advance(10);
    }
    assert.equal(lines.length, 1);
    child.warn(
      { event: 'recovery', err: { code: 'MSG_SIZE_TOO_LARGE' }, attempt: 1_000 },
      'kafka: recovering',
    );
    assert.equal(lines.length, 2);
    assert.equal(lines[1]!.repeated, 999);
    assert.equal(lines[1]!.stage, 'detector');
  });

  it('keeps distinct warnings, other stages and info lines apart', () => {
    const { log, lines } = capture(10_000);
    log.warn({ err: { code: '_TRANSPORT' } }, 'kafka: recovering');
    log.warn({ err: { code: '_RESOLVE' } }, 'kafka: recovering');
    log.child({ stage: 'a' }).warn('same text');
    log.child({ stage: 'b' }).warn('same text');
    log.info('progress');
    log.info('progress');
    assert.equal(lines.length, 6);
  });

  it('passes everything through when the interval is 0', () => {
    const { log, lines } = capture(0);
    log.warn('x');
    log.warn('x');
    assert.equal(lines.length, 2);
  });
});
