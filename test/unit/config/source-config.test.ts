import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configWarnings, validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const issues = (tree: unknown) =>
  configErrorOf(() => validateConfig(tree, { env: {} })).issues.map((i) => [i.path, i.expected]);

test('logserver input_format and log_line: defaults, and errors naming the key and the expected value', () => {
  const config = validateConfig(minimalConfig(), { env: {} });
  assert.equal(config.pipeline.log_storage.logserver.input_format, 'hamstring');
  assert.equal(config.pipeline.log_storage.logserver.pair_window_seconds, 5);
  const logserver = ['pipeline', 'log_storage', 'logserver'];
  assert.deepEqual(issues(withValue(minimalConfig(), [...logserver, 'input_format'], 'zeek')), [
    ['pipeline.log_storage.logserver.input_format', 'one of hamstring, zeek-tsv, zeek-json, suricata-eve'],
  ]);
  const mapping = withValue(minimalConfig(), [...logserver, 'log_line'], { src_ip: { from: 'client' } });
  assert.match(issues(mapping)[0]?.[0] ?? '', /^pipeline\.log_storage\.logserver\.log_line\.src_ip\.from$/);
  const ok = validateConfig(
    withValue(minimalConfig(), [...logserver, 'log_line'], {
      size: { from: 'response_size', suffix: 'b', missing: '0b' },
    }),
    { env: {} },
  );
  assert.deepEqual(ok.pipeline.log_storage.logserver.log_line, {
    size: { from: 'response_size', suffix: 'b', missing: '0b' },
  });
});

test("Python HAMSTRING's pipeline.zeek.sensors section is read: static pcaps or interfaces", () => {
  const sensors = {
    zeek1: { static_analysis: true, static_files_dir: '/data/pcaps', protocols: ['dns', 'http'] },
    zeek2: { static_analysis: false, protocols: ['dns'], interfaces: ['eth0'] },
  };
  const config = validateConfig(withValue(minimalConfig(), ['pipeline', 'zeek', 'sensors'], sensors), {
    env: {},
  });
  assert.deepEqual(config.pipeline.zeek?.sensors.zeek2, {
    static_analysis: false,
    interfaces: ['eth0'],
    protocols: ['dns'],
  });
  assert.deepEqual(
    issues(
      withValue(minimalConfig(), ['pipeline', 'zeek', 'sensors'], {
        a: { static_analysis: false },
        c: { interfaces: ['lo'], protocols: ['smtp'] },
      }),
    ),
    [
      ['pipeline.zeek.sensors.a.interfaces', 'at least one interface when static_analysis is false'],
      ['pipeline.zeek.sensors.c.protocols[0]', 'one of dns, http'],
    ],
  );
  // Python's static sensor reads a directory mounted into its container: without static_files_dir
  // it is left out with a warning (the file is read as v2.0.0 users have it), not refused.
  const withoutDir = validateConfig(
    withValue(minimalConfig(), ['pipeline', 'zeek', 'sensors'], { b: { static_analysis: true } }),
    { env: {} },
  );
  assert.deepEqual(withoutDir.pipeline.zeek?.sensors, {});
  assert.deepEqual(
    configWarnings(withoutDir).map((w) => w.path),
    ['pipeline.zeek.sensors.b'],
  );
});
