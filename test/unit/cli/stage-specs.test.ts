import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_STAGES } from '../../../src/app/builtin-stages.ts';
import { UsageError } from '../../../src/cli/command.ts';
import { stageSpecs } from '../../../src/cli/stage-specs.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { pipelineComponents } from '../../../src/stages/pipeline-components.ts';

const config = loadConfig({ path: new URL('../../../config.yaml', import.meta.url).pathname, env: {} });
const builtins = new Set(BUILTIN_STAGES.keys());

test('hamstring run: one stage keeps --name as its entry, as before', () => {
  assert.deepEqual(stageSpecs(config, ['collector'], undefined, builtins), [{ spec: 'collector' }]);
  assert.deepEqual(stageSpecs(config, ['detector'], 'domainator', builtins), [
    { spec: 'detector', component: 'domainator' },
  ]);
  assert.deepEqual(stageSpecs(config, ['examples/uppercase.ts'], undefined, builtins), [
    { spec: 'examples/uppercase.ts' },
  ]);
});

test('hamstring run: several stages, each naming its entry by short or full name', () => {
  assert.deepEqual(
    stageSpecs(
      config,
      ['logserver', 'log_collection.collector:dga_collector', 'detector:domainator', 'examples/uppercase.ts'],
      undefined,
      builtins,
    ),
    [
      { spec: 'logserver' },
      { spec: 'collector', component: 'dga_collector' },
      { spec: 'detector', component: 'domainator' },
      { spec: 'examples/uppercase.ts' },
    ],
  );
});

test('hamstring run all: every configured component, as `hamstring up` runs them', () => {
  const specs = stageSpecs(config, ['all'], undefined, builtins);
  assert.deepEqual(
    specs,
    pipelineComponents(config).map((c) => ({ spec: c.kind, component: c.name })),
  );
  assert.ok(specs.length >= 6, `the shipped config has at least the six stages, got ${specs.length}`);
});

test('hamstring run: --name beside several stages, an empty entry and a stage given twice are usage errors', () => {
  assert.throws(
    () => stageSpecs(config, ['collector', 'prefilter'], 'dga_collector', builtins),
    (e: unknown) => e instanceof UsageError && /for several write <stage>:<entry>/.test(e.message),
  );
  assert.throws(() => stageSpecs(config, ['all'], 'x', builtins), UsageError);
  assert.throws(
    () => stageSpecs(config, ['collector:'], undefined, builtins),
    (e: unknown) =>
      e instanceof UsageError && /collector:: expected <stage>:<config entry name>/.test(e.message),
  );
  assert.throws(
    () =>
      stageSpecs(
        config,
        ['prefilter:dga_prefilter', 'log_filtering.prefilter:dga_prefilter'],
        undefined,
        builtins,
      ),
    (e: unknown) => e instanceof UsageError && /given twice/.test(e.message),
  );
});
