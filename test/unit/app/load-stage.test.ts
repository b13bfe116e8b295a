import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStage } from '../../../src/app/load-stage.ts';
import type { StageFactory } from '../../../src/app/builtin-stages.ts';
import { loadConfig } from '../../../src/config/index.ts';

const config = loadConfig({ path: 'examples/uppercase.yaml', env: {} });
const dir = mkdtempSync(join(tmpdir(), 'hamstring-load-stage-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function moduleFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('the example module loads through its named export `stage`', async () => {
  const stage = await loadStage('examples/uppercase.ts', config);
  assert.equal(stage.name, 'examples.uppercase');
  assert.deepEqual(stage.outputTopics, ['examples.words-upper']);
});

test('a default-exported factory is called with the loaded config', async () => {
  const path = moduleFile(
    'factory.mjs',
    `export default (config) => ({ name: 'from-config-' + config.runtime.health_port, inputTopics: ['in'], outputTopics: [], process: () => ({ outputs: [] }) });`,
  );
  assert.equal((await loadStage(path, config)).name, `from-config-${config.runtime.health_port}`);
});

test('a built-in is found by its short or its full name', async () => {
  const detector: StageFactory = () => ({
    name: 'data_analysis.detector',
    inputTopics: ['in'],
    outputTopics: ['out'],
    process: () => ({ outputs: [] }),
  });
  const builtins = new Map([['detector', detector]]);
  assert.equal((await loadStage('detector', config, { builtins })).name, 'data_analysis.detector');
  assert.equal(
    (await loadStage('data_analysis.detector', config, { builtins })).name,
    'data_analysis.detector',
  );
});

test('an unknown name lists the built-in stages that exist', async () => {
  const builtins = new Map<string, StageFactory>([['alerter', () => assert.fail('not called')]]);
  await assert.rejects(loadStage('detecter', config, { builtins }), {
    message:
      'unknown stage "detecter": expected a built-in stage (alerter) or the path of a module exporting a stage, e.g. examples/uppercase.ts',
  });
});

test('a module without a stage export, or with a malformed stage, names what was expected', async () => {
  const none = moduleFile('none.mjs', 'export const other = 1;');
  await assert.rejects(loadStage(none, config), /expected a default export or an export named "stage"/);
  const noProcess = moduleFile(
    'no-process.mjs',
    `export const stage = { name: 's', inputTopics: ['in'], outputTopics: [] };`,
  );
  await assert.rejects(loadStage(noProcess, config), /: process: expected a function/);
  const noInputs = moduleFile(
    'no-inputs.mjs',
    `export const stage = { name: 's', inputTopics: [], outputTopics: [], process() {} };`,
  );
  await assert.rejects(
    loadStage(noInputs, config),
    /: inputTopics: expected a non-empty list of topic names/,
  );
});
