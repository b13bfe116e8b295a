import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_WARNING_LATENESS_SECONDS,
  DEFAULT_WARNING_WINDOW_SECONDS,
  validateConfig,
  warningWindowSettings,
} from '../../../src/config/index.ts';
import { minimalCollectorAndPrefilter } from '../../support/minimal-pipeline.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const pipeline = (detector: Record<string, unknown>) => ({
  ...minimalCollectorAndPrefilter(),
  data_inspection: [
    { name: 'i', inspector_module_name: 'm', inspector_class_name: 'NoInspector', prefilter_name: 'p' },
  ],
  data_analysis: [{ name: 'd', detector_module_name: 'm', threshold: 0.5, inspector_name: 'i', ...detector }],
});
const load = (detector: Record<string, unknown>) =>
  validateConfig(withValue(minimalConfig(), ['pipeline'], pipeline(detector)), { env: {} });

test('a Domainator needs no model; its windows default to 3..10 requests and min_warnings to 1', () => {
  const config = load({ detector_class_name: 'DomainatorDetector' });
  const d = config.pipeline.data_analysis[0];
  assert.deepEqual(d?.domainator, {
    min_window: 3,
    max_window: 10,
    idle_timeout_seconds: 300,
    search_domains: [],
  });
  assert.equal(d?.min_warnings, 1);
});

test('a DGADetector without model and checksum names both keys', () => {
  const error = configErrorOf(() => load({ detector_class_name: 'DGADetector' }));
  assert.deepEqual(error.issues.map((i) => i.path).sort(), [
    'pipeline.data_analysis[0].checksum',
    'pipeline.data_analysis[0].model',
  ]);
  assert.match(
    error.format(),
    /checksum: expected SHA-256 hex digest \(64 hex characters\) \(detector_class_name is DGADetector\)/,
  );
});

test('an unknown detector class lists the implemented ones', () => {
  const error = configErrorOf(() => load({ detector_class_name: 'RandomForest' }));
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.detector_class_name: expected DGADetector or DomainatorDetector, got "RandomForest"/,
  );
});

test('min_window above max_window is an error naming the bound', () => {
  const error = configErrorOf(() =>
    load({ detector_class_name: 'DomainatorDetector', domainator: { min_window: 12, max_window: 10 } }),
  );
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.domainator\.min_window: expected integer <= max_window \(10\), got 12/,
  );
});

test('the warning window keys are optional; their defaults come from warningWindowSettings', () => {
  const d = load({ detector_class_name: 'DomainatorDetector' }).pipeline.data_analysis[0]!;
  assert.equal(d.warning_window_seconds, undefined);
  assert.deepEqual(warningWindowSettings(d), {
    minWarnings: 1,
    windowMs: DEFAULT_WARNING_WINDOW_SECONDS * 1000,
    latenessMs: DEFAULT_WARNING_LATENESS_SECONDS * 1000,
    idleTimeoutMs: (2 * DEFAULT_WARNING_WINDOW_SECONDS + DEFAULT_WARNING_LATENESS_SECONDS) * 1000,
  });
  const set = load({
    detector_class_name: 'DomainatorDetector',
    warning_window_seconds: 60,
    warning_lateness_seconds: 0,
  }).pipeline.data_analysis[0]!;
  assert.equal(warningWindowSettings(set).idleTimeoutMs, 120_000);
});

test('a bad warning window names the key and the expected value', () => {
  const window = configErrorOf(() =>
    load({ detector_class_name: 'DomainatorDetector', warning_window_seconds: 0 }),
  );
  assert.match(
    window.format(),
    /pipeline\.data_analysis\[0\]\.warning_window_seconds: expected integer between 1 and 86400, got 0/,
  );
  const idle = configErrorOf(() =>
    load({
      detector_class_name: 'DomainatorDetector',
      warning_window_seconds: 100,
      warning_idle_timeout_seconds: 30,
    }),
  );
  assert.match(
    idle.format(),
    /pipeline\.data_analysis\[0\]\.warning_idle_timeout_seconds: expected number >= 2 x warning_window_seconds \+ warning_lateness_seconds \(260\), got 30/,
  );
});

test('weak_warnings: a lower score and more names than the entry, each bound named when broken', () => {
  const dga = { detector_class_name: 'DGADetector', model: 'm', checksum: 'a'.repeat(64), min_warnings: 3 };
  const d = load({ ...dga, threshold: 0.95, weak_warnings: { threshold: 0.5, min_warnings: 12 } }).pipeline
    .data_analysis[0]!;
  assert.deepEqual(warningWindowSettings(d).weak, { threshold: 0.5, minWarnings: 12 });
  const error = configErrorOf(() =>
    load({ ...dga, threshold: 0.95, weak_warnings: { threshold: 0.96, min_warnings: 3 } }),
  );
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.weak_warnings\.threshold: expected number below threshold \(0\.95\), got 0\.96/,
  );
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.weak_warnings\.min_warnings: expected integer above min_warnings \(3\), got 3/,
  );
  const domainator = configErrorOf(() =>
    load({ detector_class_name: 'DomainatorDetector', weak_warnings: { threshold: 0.1, min_warnings: 9 } }),
  );
  assert.match(domainator.format(), /weak_warnings: expected no weak_warnings \(only a DGADetector/);
});

test('spread_warnings: a fraction, a count and domain names, each named when wrong; DGADetector only', () => {
  const dga = { detector_class_name: 'DGADetector', model: 'm', checksum: 'a'.repeat(64), threshold: 0.9 };
  const d = load({
    ...dga,
    spread_warnings: { threshold: 0, min_warnings: 20, exempt_domains: ['Corp.Example.com.'] },
  }).pipeline.data_analysis[0]!;
  assert.deepEqual(warningWindowSettings(d).spread, {
    threshold: 0,
    minWarnings: 20,
    exemptDomains: ['corp.example.com'],
  });
  const plain = load({ ...dga, spread_warnings: { threshold: 0.1, min_warnings: 9 } }).pipeline
    .data_analysis[0]!;
  assert.deepEqual(warningWindowSettings(plain).spread?.exemptDomains, []);
  const error = configErrorOf(() =>
    load({ ...dga, spread_warnings: { threshold: 2, min_warnings: 0, exempt_domains: ['a b'] } }),
  );
  assert.match(error.format(), /pipeline\.data_analysis\[0\]\.spread_warnings\.threshold: expected /);
  assert.match(error.format(), /pipeline\.data_analysis\[0\]\.spread_warnings\.min_warnings: expected /);
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.spread_warnings\.exempt_domains\[0\]: expected domain name/,
  );
  const domainator = configErrorOf(() =>
    load({ detector_class_name: 'DomainatorDetector', spread_warnings: { threshold: 0, min_warnings: 9 } }),
  );
  assert.match(domainator.format(), /spread_warnings: expected no spread_warnings \(only a DGADetector/);
});

test('domainator.search_domains: domain names, lower-cased without the trailing dot; anything else named', () => {
  const d = load({
    detector_class_name: 'DomainatorDetector',
    domainator: { search_domains: ['Corp.Example.COM.'] },
  }).pipeline.data_analysis[0]!;
  assert.deepEqual(d.domainator.search_domains, ['corp.example.com']);
  const error = configErrorOf(() =>
    load({ detector_class_name: 'DomainatorDetector', domainator: { search_domains: ['corp example'] } }),
  );
  assert.match(
    error.format(),
    /pipeline\.data_analysis\[0\]\.domainator\.search_domains\[0\]: expected domain name of letters, digits and hyphens/,
  );
});
