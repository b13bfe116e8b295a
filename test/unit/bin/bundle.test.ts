import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import { fromBundle, projectRoot, sourcePath } from '../../../src/assets/project.ts';
import scoreTask, { type ScoreTask } from '../../../src/stages/detector/score-task.ts';
import type { TaskReply } from '../../../src/runtime/thread-pool-worker.ts';
import { buildBundle } from '../../../scripts/build.ts';

const run = promisify(execFile);
// A bundle of its own under var/ (under the project root, where a bundle finds package.json), so
// the test leaves dist/ alone.
const outdir = join('var', 'test', `bundle-${process.pid}`);
const out = join(projectRoot, outdir);
after(() => rmSync(out, { recursive: true, force: true }));

describe('the production bundle (scripts/build.ts)', () => {
  before(async () => {
    await buildBundle(outdir);
  });

  it('runs the command without tsx', async () => {
    const { stdout } = await run(process.execPath, [join(out, 'cli', 'main.js'), '--help'], {
      cwd: projectRoot,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    assert.match(stdout, /^usage: hamstring <command>/);
  });

  it("starts a thread from its own entry modules and scores as the sources do (the detector's pool)", async () => {
    const modelPath = join(projectRoot, 'models', 'dga-gbt.json');
    const checksum = readFileSync(`${modelPath}.sha256`, 'utf8').trim().split(/\s+/)[0] ?? '';
    const task: ScoreTask = { modelPath, checksum, domains: ['wikipedia.org', 'xkqjzvwpthrbn.com'] };
    // The module the bundled detector hands its pool: code shared by entries sits in a chunk, so a
    // URL taken from import.meta.url there would name the chunk, which has no default export.
    const bundled = (await import(pathToFileURL(join(out, 'stages', 'detector', 'score-task.js')).href)) as {
      DGA_SCORE_TASK_MODULE: URL;
    };
    assert.equal(
      bundled.DGA_SCORE_TASK_MODULE.href,
      pathToFileURL(join(out, 'stages', 'detector', 'score-task.js')).href,
    );
    const worker = new Worker(new URL(pathToFileURL(join(out, 'runtime', 'thread-pool-worker.js'))), {
      workerData: { module: bundled.DGA_SCORE_TASK_MODULE.href },
      // No loader hooks reach the thread: it must run on plain JavaScript.
      execArgv: [],
    });
    try {
      const reply = await new Promise<TaskReply>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage(task);
      });
      assert.deepEqual(reply, { ok: true, output: scoreTask(task) });
    } finally {
      await worker.terminate();
    }
  });

  it('finds the project root and the source tree from the sources', () => {
    assert.equal(fromBundle, false);
    assert.equal(projectRoot, process.cwd());
    assert.equal(sourcePath('assets/project.ts'), join(process.cwd(), 'src', 'assets', 'project.ts'));
  });
});
