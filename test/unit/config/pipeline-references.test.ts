import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/index.ts';
import { configErrorOf, shippedConfigText } from './helpers.ts';

const loadText = (text: string) => loadConfig({ text, env: {} });

test('a prefilter naming an unknown collector is an error listing the collectors', () => {
  const text = shippedConfigText().replace('collector_name: dga_collector', 'collector_name: dns_collector');
  assert.equal(
    configErrorOf(() => loadText(text)).format(),
    'config.yaml: pipeline.log_filtering[0].collector_name: expected name of an entry of pipeline.log_collection.collectors ("dga_collector"), got "dns_collector"',
  );
});

test('an inspector naming an unknown prefilter is an error', () => {
  const text = shippedConfigText().replace('prefilter_name: dga_prefilter', 'prefilter_name: dga_filter');
  assert.match(
    configErrorOf(() => loadText(text)).format(),
    /pipeline\.data_inspection\[0\]\.prefilter_name: expected name of an entry of pipeline\.log_filtering \("dga_prefilter", "tunnel_prefilter"\), got "dga_filter"$/,
  );
});

test('a detector naming an unknown inspector is an error', () => {
  const text = shippedConfigText().replace('inspector_name: dga_inspector', 'inspector_name: no_inspector');
  assert.match(
    configErrorOf(() => loadText(text)).format(),
    /pipeline\.data_analysis\[0\]\.inspector_name: expected name of an entry of pipeline\.data_inspection \("dga_inspector", "tunnel_inspector"\), got "no_inspector"$/,
  );
});

test('two collectors with the same name are an error', () => {
  const text = shippedConfigText().replace(
    '  log_filtering:',
    '      - name: dga_collector\n        protocol_base: dns\n        required_log_information: [[ts, Timestamp, "%Y"], [src_ip, IpAddress]]\n\n  log_filtering:',
  );
  assert.equal(
    configErrorOf(() => loadText(text)).format(),
    'config.yaml: pipeline.log_collection.collectors[1].name: expected unique name, got "dga_collector" ("dga_collector" is already used)',
  );
});

test('produce_topics naming an alerter that does not exist is an error', () => {
  const text = shippedConfigText().replace("produce_topics: ''", 'produce_topics: generic, slack');
  assert.equal(
    configErrorOf(() => loadText(text)).format(),
    'config.yaml: pipeline.data_analysis[0].produce_topics: expected alerter names among "generic", got ["generic","slack"] (no alerter consumes "slack"; add it to pipeline.alerting.plugins)',
  );
});

test('produce_topics may name alerter plugins, as a comma-separated string or a list', () => {
  const plugins =
    'plugins:\n      - name: slack\n        alerter_module_name: slack_alerter\n        alerter_class_name: SlackAlerter';
  const asString = shippedConfigText()
    .replace('plugins: []', plugins)
    .replace("produce_topics: ''", 'produce_topics: generic, slack');
  const asList = shippedConfigText()
    .replace('plugins: []', plugins)
    .replace("produce_topics: ''", 'produce_topics: [slack]');
  assert.deepEqual(loadText(asString).pipeline.data_analysis[0]?.produce_topics, ['generic', 'slack']);
  assert.deepEqual(loadText(asList).pipeline.data_analysis[0]?.produce_topics, ['slack']);
});

test('an ensemble inspector needs an ensemble model', () => {
  const text = shippedConfigText()
    .replace('mode: univariate', 'mode: ensemble')
    .replace(/ {6}ensemble:\n {8}model: WeightEnsemble\n {8}module: streamad.process\n {8}model_args:\n/, '');
  assert.equal(
    configErrorOf(() => loadText(text)).format(),
    'config.yaml: pipeline.data_inspection[0].ensemble: expected {model, module, model_args} (mode is ensemble), got nothing',
  );
});

test('a component name that cannot be part of a topic name is an error', () => {
  const text = shippedConfigText().replace('- name: dga_detector', '- name: dga detector');
  assert.equal(
    configErrorOf(() => loadText(text)).format(),
    'config.yaml: pipeline.data_analysis[0].name: expected name usable in a topic name (letters, digits, ".", "_", "-"), got "dga detector"',
  );
});
