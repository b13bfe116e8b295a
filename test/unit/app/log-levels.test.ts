import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logLevelsFromConfig } from '../../../src/app/log-levels.ts';
import { ConfigError, validateConfig, type HamstringConfigInput } from '../../../src/config/index.ts';
import { minimalConfig } from '../config/helpers.ts';

const configWith = (logging: HamstringConfigInput['logging']) =>
  validateConfig({ ...minimalConfig(), logging }, { env: {} });

test('logging.base.debug sets the base level; without it the base is info', () => {
  assert.equal(logLevelsFromConfig(configWith({ base: { debug: true } }), {}).base, 'debug');
  assert.equal(logLevelsFromConfig(configWith({}), {}).base, 'info');
});

test('logging.modules.<full stage name>.debug lowers only that stage to debug', () => {
  const levels = logLevelsFromConfig(configWith({ modules: { 'examples.uppercase': { debug: true } } }), {});
  assert.equal(levels.stage('examples.uppercase'), 'debug');
  assert.equal(levels.stage('data_analysis.detector'), 'info');
});

test('HAMSTRING_LOG_LEVEL is final over logging.base.debug, and a module flag never raises a stage above it', () => {
  const config = configWith({ base: { debug: true }, modules: { mine: { debug: true } } });
  const warn = logLevelsFromConfig(config, { HAMSTRING_LOG_LEVEL: 'warn' });
  assert.equal(warn.base, 'warn');
  assert.equal(warn.stage('mine'), 'debug');
  assert.equal(logLevelsFromConfig(config, { HAMSTRING_LOG_LEVEL: 'trace' }).stage('mine'), 'trace');
});

test('a malformed HAMSTRING_LOG_LEVEL is a config error naming the variable and the accepted levels', () => {
  assert.throws(
    () => logLevelsFromConfig(configWith({}), { HAMSTRING_LOG_LEVEL: 'verbose' }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.issues[0]?.path === 'HAMSTRING_LOG_LEVEL' &&
      /expected one of trace, debug, info, warn, error, fatal, silent, got "verbose"/.test(e.format()),
  );
});
