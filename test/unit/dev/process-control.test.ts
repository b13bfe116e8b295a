import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  killAndWait,
  pauseOrResume,
  processState,
  spawnDetached,
  tailFile,
  terminate,
} from '../../../src/dev/process-control.ts';

function startSleeper(marker: string) {
  const dir = mkdtempSync(join(tmpdir(), 'hamstring-proc-'));
  const script = `setInterval(() => {}, 1000); // ${marker}`;
  return {
    dir,
    child: spawnDetached(process.execPath, ['-e', script, marker], {
      cwd: dir,
      outputFile: join(dir, 'out.log'),
    }),
  };
}

describe('process control', () => {
  test('a detached child is running, pauses, resumes and is gone after kill -9', async () => {
    const marker = `sleeper-${process.pid}-${Date.now()}`;
    const { child } = startSleeper(marker);
    assert.equal(processState(child.pid, marker), 'running');
    pauseOrResume(child.pid, marker, 'SIGSTOP');
    assert.equal(processState(child.pid, marker), 'stopped');
    pauseOrResume(child.pid, marker, 'SIGCONT');
    assert.equal(processState(child.pid, marker), 'running');
    await killAndWait(child.pid, marker);
    assert.equal(processState(child.pid, marker), 'gone');
  });

  test('a pid whose command line lacks the marker counts as gone (pid reuse)', async () => {
    const { child } = startSleeper('real-marker');
    try {
      assert.equal(processState(child.pid, 'some-other-marker'), 'gone');
    } finally {
      await killAndWait(child.pid, 'real-marker');
    }
  });

  test('terminate stops a paused process too', async () => {
    const marker = `paused-${process.pid}-${Date.now()}`;
    const { child } = startSleeper(marker);
    pauseOrResume(child.pid, marker, 'SIGSTOP');
    assert.equal(await terminate(child.pid, marker, 5000), 'exited');
    assert.equal(processState(child.pid), 'gone');
  });

  test('tailFile returns the last lines without Java stack frames', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'hamstring-tail-')), 'log');
    writeFileSync(file, 'a\nb\njava.lang.RuntimeException: boom\n\tat x.y(Z.java:1)\n\t... 3 more\nc\n');
    assert.equal(tailFile(file, 2), 'java.lang.RuntimeException: boom\nc');
    assert.equal(tailFile(join(file, 'missing')), '');
  });
});
