import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { kafkaRunningStateSchema } from '../../../src/dev/kafka-state.ts';
import { readStateFile, removeStateFile, writeStateFile } from '../../../src/dev/state-file.ts';

const state = {
  java: '/usr/bin/java',
  libsDir: '/libs',
  heapMb: 512,
  bootstrapServers: '127.0.0.1:9092',
  nodes: [{ id: 1, pid: 42, brokerPort: 9092, controllerPort: 9093, startedAt: '2025-01-01T00:00:00.000Z' }],
};

describe('state file', () => {
  test('round-trips through JSON and leaves no temporary file behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hamstring-state-'));
    const file = join(dir, 'state.json');
    writeStateFile(file, state);
    assert.deepEqual(readStateFile(file, kafkaRunningStateSchema), state);
    assert.deepEqual(readdirSync(dir), ['state.json']);
  });

  test('a missing file reads as undefined, also after remove', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'hamstring-state-')), 'state.json');
    assert.equal(readStateFile(file, kafkaRunningStateSchema), undefined);
    writeStateFile(file, state);
    removeStateFile(file);
    assert.equal(readStateFile(file, kafkaRunningStateSchema), undefined);
  });

  test('a corrupt or foreign file is an error naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hamstring-state-'));
    writeFileSync(join(dir, 'broken.json'), '{');
    writeFileSync(join(dir, 'foreign.json'), '{"pid": "x"}');
    assert.throws(
      () => readStateFile(join(dir, 'broken.json'), kafkaRunningStateSchema),
      /broken\.json is not valid JSON/,
    );
    assert.throws(
      () => readStateFile(join(dir, 'foreign.json'), kafkaRunningStateSchema),
      /foreign\.json has an unexpected shape/,
    );
  });
});
