import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const PATH = 'pipeline.data_inspection[0]';

function withInspector(inspector: Record<string, unknown>) {
  let tree = withValue(
    minimalConfig(),
    ['pipeline', 'log_collection', 'collectors'],
    [
      {
        name: 'c',
        protocol_base: 'dns',
        required_log_information: [
          ['ts', 'Timestamp', '%Y'],
          ['src_ip', 'IpAddress'],
        ],
      },
    ],
  );
  tree = withValue(
    tree,
    ['pipeline', 'log_filtering'],
    [{ name: 'p', relevance_method: 'no_relevance_check', collector_name: 'c' }],
  );
  return withValue(
    tree,
    ['pipeline', 'data_inspection'],
    [
      {
        name: 'i',
        inspector_module_name: 'stream_ad_inspector',
        inspector_class_name: 'StreamADInspector',
        prefilter_name: 'p',
        ...inspector,
      },
    ],
  );
}

const errorLines = (inspector: Record<string, unknown>) =>
  configErrorOf(() => validateConfig(withInspector(inspector), { env: {} }))
    .format()
    .split('\n');

const zscore = { model: 'ZScoreDetector', module: 'streamad.model', model_args: { is_global: false } };

test('a known univariate model gets its argument defaults', () => {
  const config = validateConfig(withInspector({ models: [zscore] }), { env: {} });
  assert.deepEqual(config.pipeline.data_inspection[0]?.models, [zscore]);
});

test('a model the mode does not know is an error that lists the known ones', () => {
  assert.deepEqual(errorLines({ mode: 'multivariate', models: [zscore] }), [
    `config.yaml: ${PATH}.models[0].model: expected multivariate model among "LodaDetector", got "ZScoreDetector"`,
  ]);
});

test('a misspelt model argument names the arguments the model takes', () => {
  const models = [{ ...zscore, model_args: { window: 10 } }];
  assert.deepEqual(errorLines({ models }), [
    `config.yaml: ${PATH}.models[0].model_args.window: expected an argument of ZScoreDetector (window_len, is_global, sigma), got 10`,
  ]);
});

test('a model argument of the wrong type is an error at its key', () => {
  const models = [{ model: 'EWMADetector', module: 'm', model_args: { alpha: 2 } }];
  assert.deepEqual(errorLines({ models }), [
    `config.yaml: ${PATH}.models[0].model_args.alpha: expected number between 0 and 1, got 2`,
  ]);
});

test('univariate mode takes exactly one model', () => {
  const lines = errorLines({ models: [zscore, { ...zscore, model: 'MadDetector', model_args: {} }] });
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(
    lines[0] ?? '',
    /models: expected exactly one model \(mode univariate; mode ensemble combines several\)/,
  );
});

test('ensemble weights must match the number of models', () => {
  const ensemble = {
    model: 'WeightEnsemble',
    module: 'streamad.process',
    model_args: { ensemble_weights: [1] },
  };
  const models = [zscore, { model: 'MadDetector', module: 'm', model_args: {} }];
  assert.deepEqual(errorLines({ mode: 'ensemble', models, ensemble }), [
    `config.yaml: ${PATH}.ensemble.model_args.ensemble_weights: expected one weight per model (2), got [1]`,
  ]);
});

test('NoInspector needs no models', () => {
  const config = validateConfig(withInspector({ inspector_class_name: 'NoInspector' }), { env: {} });
  assert.equal(config.pipeline.data_inspection[0]?.inspector_class_name, 'NoInspector');
});
