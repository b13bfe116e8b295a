import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const pipeline = (detector: Record<string, unknown>) => ({
  log_collection: {
    collectors: [
      {
        name: 'c',
        protocol_base: 'dns',
        required_log_information: [
          ['ts', 'Timestamp', '%Y'],
          ['src_ip', 'IpAddress'],
        ],
      },
    ],
  },
  log_filtering: [{ name: 'p', relevance_method: 'no_relevance_check', collector_name: 'c' }],
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
  assert.deepEqual(d?.domainator, { min_window: 3, max_window: 10, idle_timeout_seconds: 300 });
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
