import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../../src/dev/paths.ts';
import { HOSTILE_KINDS } from '../../../src/verify/pipeline/hostile-lines.ts';
import { hostileProblems, hostileText, runHostile } from '../../../src/verify/pipeline/hostile-run.ts';
import { longOr } from '../../helpers/long-run.ts';
import { ownClickHousePort, startOwnClickHouse } from '../../helpers/own-clickhouse.ts';

/**
 * `hamstring verify --pipeline --hostile` in `npm run test:long` (scripts/run-integration-tests.ts,
 * LONG_ONLY): a million lines of the hostile mix after 200,000 clean ones; 20,000 after 5,000 when
 * the file is named alone (about 4 minutes: too long for the default suite).
 */
const SIZE = longOr(
  { lines: 20_000, cleanLines: 5_000, nearLimitEvery: 100 },
  { lines: 1_000_000, cleanLines: 200_000, nearLimitEvery: 500 },
);

test(`${SIZE.lines} lines of hostile input through the whole pipeline after ${SIZE.cleanLines} clean ones: every hostile line rejected once with its reason, every valid one (unknown fields too) processed once, no stage over 2x slower than on clean input`, async () => {
  const clickhouse = await startOwnClickHouse('pipeline-hostile', 170);
  try {
    const run = await runHostile({
      seed: 1,
      hosts: 40,
      ...SIZE,
      share: 0.2,
      dir: join(projectRoot, 'var', 'test', 'verify-hostile'),
      kafkaBasePort: ownClickHousePort(160),
      clickhouse: clickhouse.server,
      database: 'verify_hostile',
      baseConfig: join(projectRoot, 'config.yaml'),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const text = hostileText(run);
    process.stdout.write(`${text}\n`);
    assert.deepEqual(hostileProblems(run), [], text);
    const a = run.accounting;
    assert.equal(a.lines, SIZE.lines + SIZE.cleanLines);
    assert.equal(a.lost.length + a.twice.length + a.misjudged.length, 0, text);
    const hostile = Object.values(run.hostileByKind).reduce((x, y) => x + y, 0);
    assert.equal(hostile, SIZE.lines * 0.2, text);
    // Every kind was in the mix; all but the unknown fields were rejected, each line once, with the
    // reason its kind calls for.
    for (const kind of HOSTILE_KINDS) assert.ok((run.hostileByKind[kind] ?? 0) > 0, kind);
    assert.equal(a.fates.rejected, hostile - (run.hostileByKind['unknown fields'] ?? 0), text);
    assert.equal(run.rejectedByReason['unknown fields'], undefined, text);
    assert.equal(run.rejectedByReason['valid line'], undefined, text);
    assert.deepEqual(
      run.rejectedByReason['near the size limit'],
      { 'line of N bytes exceeds max_line_bytes': run.hostileByKind['near the size limit'] },
      text,
    );
    assert.deepEqual(run.rejectedByReason['invalid UTF-8'], {
      'not valid UTF-8': run.hostileByKind['invalid UTF-8'],
    });
  } finally {
    await clickhouse.server.stop();
  }
});
