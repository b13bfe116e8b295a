import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { RE2JS } from 're2js';
import {
  configWarnings,
  DOMAIN_NAME_PATTERN,
  loadConfig,
  V2_DOMAIN_NAME_PATTERN,
  validateConfig,
} from '../../../src/config/index.ts';
import { rewriteLookaround } from '../../../src/config/lookaround.ts';
import { compileLineValidator } from '../../../src/stages/collector/line-validation.ts';
import { generateTraffic } from '../../../src/traffic/generator.ts';
import { configErrorOf, minimalConfig, SHIPPED_CONFIG_PATH, withValue } from './helpers.ts';

const V2_CONFIG = fileURLToPath(new URL('./fixtures/hamstring-v2.0.0-config.yaml', import.meta.url));
const matchesEmpty = (pattern: string) => RE2JS.compile(pattern).matcher('').lookingAt();

test("HAMSTRING v2.0.0's config.yaml loads as it is, each difference a warning naming its key", () => {
  const config = loadConfig({ path: V2_CONFIG, env: {} });
  assert.deepEqual(
    configWarnings(config).map((w) => w.path),
    [
      'pipeline.log_collection.collectors[0].required_log_information[4][2]',
      'pipeline.data_analysis[0].base_url',
      'pipeline.data_analysis[0].model',
      'pipeline.zeek.sensors.zeek1',
    ],
  );
  const [domain] = configWarnings(config);
  assert.match(domain?.message ?? '', /lookaround.*maximum length of 253.*xn--p1ai/);
  const field = config.pipeline.log_collection.collectors[0]?.required_log_information[4];
  assert.deepEqual(field, {
    name: 'domain_name',
    type: 'RegEx',
    pattern: DOMAIN_NAME_PATTERN,
    maxLength: 253,
  });
  const detector = config.pipeline.data_analysis[0];
  assert.equal(detector?.model, 'dga-gbt');
  assert.match(configWarnings(config)[2]?.message ?? '', /models\/rf\.json.*"dga-gbt"/);
  assert.equal(detector?.threshold, 0.5);
  // The interface sensor is read as Python writes it; the static one without a directory is left out.
  assert.deepEqual(Object.keys(config.pipeline.zeek?.sensors ?? {}), ['zeek2']);
  assert.deepEqual(config.pipeline.zeek?.sensors.zeek2?.interfaces, ['eth0']);
});

test('the shipped config.yaml loads without a single compatibility warning', () => {
  assert.deepEqual(configWarnings(loadConfig({ path: SHIPPED_CONFIG_PATH, env: {} })), []);
});

test("v2.0.0's own collector, as read, accepts every v2-format line of the generator", () => {
  const collector = loadConfig({ path: V2_CONFIG, env: {} }).pipeline.log_collection.collectors[0];
  assert.ok(collector);
  const validate = compileLineValidator(collector.required_log_information, {
    maxLineBytes: 16_384,
    maxDepth: 32,
  });
  const traffic = generateTraffic({
    seed: 3,
    rate: 200,
    durationSeconds: 20,
    hosts: 40,
    startMs: Date.UTC(2026, 10, 30),
    format: 'v2',
  });
  let lines = 0;
  for (const { line } of traffic.lines()) {
    const verdict = validate(Buffer.from(line));
    assert.ok(verdict.ok, `${line}: ${verdict.ok ? '' : verdict.reason}`);
    lines += 1;
  }
  assert.ok(lines > 3_000, `${lines} lines`);
});

test("the rewrite of v2.0.0's domain pattern accepts exactly what Python's lookaround pattern does", () => {
  const rewrite = rewriteLookaround(V2_DOMAIN_NAME_PATTERN, matchesEmpty);
  assert.ok(rewrite.ok);
  assert.equal(rewrite.maxLength, 253);
  assert.equal(rewrite.pattern, '^([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$');
  // JavaScript's lookaround has Python's meaning for these constructs: it is the reference.
  const python = new RegExp(V2_DOMAIN_NAME_PATTERN);
  const re2 = RE2JS.compile(rewrite.pattern);
  const alphabet = 'ab9-.Z';
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  const samples = ['a.bc', '-a.bc', 'a-.bc', 'a--b.cd', `${'a'.repeat(63)}.com`, `${'a'.repeat(64)}.com`];
  for (let i = 0; i < 20_000; i += 1) {
    let s = '';
    for (let n = next() % 12; n > 0; n -= 1) s += alphabet[next() % alphabet.length];
    samples.push(s);
  }
  samples.push(`${`${'a'.repeat(61)}.`.repeat(4)}com`, `${`${'a'.repeat(62)}.`.repeat(4)}com`);
  for (const value of samples) {
    const rewritten = value.length <= 253 && re2.matcher(value).lookingAt();
    assert.equal(rewritten, python.test(value), JSON.stringify(value));
  }
});

test('a lookaround pattern other than v2.0.0 is rewritten where RE2 has an equivalent, with a warning', () => {
  const tree = withValue(
    minimalConfig(),
    ['pipeline', 'log_collection', 'collectors'],
    [
      {
        name: 'c',
        protocol_base: 'dns',
        required_log_information: [
          ['ts', 'Timestamp', '%Y'],
          ['src_ip', 'IpAddress'],
          ['user', 'RegEx', '^(?=.{1,32}$)(?!-)[a-z0-9-]+(?<!-)$'],
        ],
      },
    ],
  );
  const config = validateConfig(tree, { env: {} });
  assert.deepEqual(config.pipeline.log_collection.collectors[0]?.required_log_information[2], {
    name: 'user',
    type: 'RegEx',
    pattern: '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$',
    maxLength: 32,
  });
  const [warning] = configWarnings(config);
  assert.equal(warning?.path, 'pipeline.log_collection.collectors[0].required_log_information[2][2]');
  assert.match(warning?.message ?? '', /became a maximum length of 32.*maximum length of 32/);
});

test('a lookaround pattern without an RE2 equivalent is refused, naming the key and why', () => {
  const tree = withValue(
    minimalConfig(),
    ['pipeline', 'log_collection', 'collectors'],
    [
      {
        name: 'c',
        protocol_base: 'dns',
        required_log_information: [
          ['ts', 'Timestamp', '%Y'],
          ['src_ip', 'IpAddress'],
          ['user', 'RegEx', '^(?=.{3,32}$)[a-z]+$'],
        ],
      },
    ],
  );
  const error = configErrorOf(() => validateConfig(tree, { env: {} }));
  assert.equal(error.issues.length, 1);
  assert.equal(error.issues[0]?.path, 'pipeline.log_collection.collectors[0].required_log_information[2][2]');
  assert.match(error.message, /not rewritten automatically: \^\(\?=\.\{3,32\}\$\): a minimum length of 3/);
});

test('rewrites: a run guarded at one end, an unbounded run, and what has no form', () => {
  const rewrite = (p: string) => rewriteLookaround(p, matchesEmpty);
  assert.deepEqual(rewrite('^[a-z-]{2,5}(?<!-)$'), {
    ok: true,
    pattern: '^[a-z-]{1,4}[a-z]$',
    changes: ['[a-z-]{2,5}(?<!-) became [a-z-]{1,4}[a-z]'],
  });
  assert.equal((rewrite('^(?!_)[a-z_]+$') as { pattern: string }).pattern, '^[a-z][a-z_]*$');
  assert.equal(rewrite('^(?<=a)b').ok, false);
  assert.equal(rewrite('^(?=.{1,9})a').ok, false); // a lookahead without $ bounds nothing
  assert.equal(rewrite('^(?=.{1,9}$)[^x]+$').ok, false); // [^x] matches a line break, "." does not
  assert.equal(rewrite('^(?!-)[!-~]{1,9}$').ok, false); // "-" is inside the range
});

test('Python plugin settings written as flat keys are read as options, with a warning', () => {
  const tree = withValue(
    minimalConfig(),
    ['pipeline', 'alerting', 'plugins'],
    [{ name: 'strict', alerter_module_name: 'm', alerter_class_name: 'MinimumScoreAlerter', min_score: 0.9 }],
  );
  const config = validateConfig(tree, { env: {} });
  assert.deepEqual(config.pipeline.alerting.plugins[0]?.options, { min_score: 0.9 });
  assert.deepEqual(configWarnings(config), [
    {
      path: 'pipeline.alerting.plugins[0]',
      message: 'plugin settings min_score read as options.min_score (where this implementation keeps them)',
    },
  ]);
});

test('Timestamp takes a list of formats; optional fields are neither required nor reserved nor twice', () => {
  const collector = (extra: object) =>
    withValue(
      minimalConfig(),
      ['pipeline', 'log_collection', 'collectors'],
      [
        {
          name: 'c',
          protocol_base: 'dns',
          required_log_information: [
            ['ts', 'Timestamp', ['%Y-%m-%d', '%Y']],
            ['src_ip', 'IpAddress'],
            ['size', 'RegEx', '^\\d+$'],
          ],
          ...extra,
        },
      ],
    );
  const ok = validateConfig(collector({ optional_log_information: [['response_ip', 'IpAddress']] }), {
    env: {},
  });
  assert.deepEqual(ok.pipeline.log_collection.collectors[0]?.required_log_information[0], {
    name: 'ts',
    type: 'Timestamp',
    format: '%Y-%m-%d',
    formats: ['%Y-%m-%d', '%Y'],
  });
  const error = configErrorOf(() =>
    validateConfig(
      collector({
        optional_log_information: [
          ['src_ip', 'IpAddress'],
          ['size', 'RegEx', '^\\d+b$'],
          ['status_code', 'ListItem', ['A'], ['A']],
        ],
      }),
      { env: {} },
    ),
  );
  assert.deepEqual(
    error.issues.map((i) => i.path),
    [
      'pipeline.log_collection.collectors[0].optional_log_information[0][0]',
      'pipeline.log_collection.collectors[0].optional_log_information[2][3]',
      'pipeline.log_collection.collectors[0].optional_log_information[1][0]',
    ],
  );
  const badFormat = configErrorOf(() =>
    validateConfig(
      withValue(
        collector({}),
        ['pipeline', 'log_collection', 'collectors', 0, 'required_log_information', 0],
        ['ts', 'Timestamp', ['%Y', '%U']],
      ),
      { env: {} },
    ),
  );
  assert.equal(
    badFormat.issues[0]?.path,
    'pipeline.log_collection.collectors[0].required_log_information[0][2][1]',
  );
});
