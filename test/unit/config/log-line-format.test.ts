import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOMAIN_NAME_PATTERN, validateConfig } from '../../../src/config/index.ts';
import { configErrorOf, minimalConfig, withValue } from './helpers.ts';

const FIELDS_PATH = 'pipeline.log_collection.collectors[0].required_log_information';

const validFields = (): unknown[][] => [
  ['ts', 'Timestamp', '%Y-%m-%dT%H:%M:%S.%fZ'],
  ['status_code', 'ListItem', ['NOERROR', 'NXDOMAIN'], ['NXDOMAIN']],
  ['src_ip', 'IpAddress'],
  ['domain_name', 'RegEx', '^[a-z.]+$'],
];

function withFields(fields: unknown) {
  return withValue(
    minimalConfig(),
    ['pipeline', 'log_collection', 'collectors'],
    [{ name: 'dga_collector', protocol_base: 'dns', required_log_information: fields }],
  );
}

const errorLines = (fields: unknown) =>
  configErrorOf(() => validateConfig(withFields(fields), { env: {} }))
    .format()
    .split('\n');

test('valid fields become typed field descriptions', () => {
  const config = validateConfig(withFields(validFields()), { env: {} });
  assert.deepEqual(config.pipeline.log_collection.collectors[0]?.required_log_information, [
    { name: 'ts', type: 'Timestamp', format: '%Y-%m-%dT%H:%M:%S.%fZ' },
    { name: 'status_code', type: 'ListItem', allowed: ['NOERROR', 'NXDOMAIN'], relevant: ['NXDOMAIN'] },
    { name: 'src_ip', type: 'IpAddress' },
    { name: 'domain_name', type: 'RegEx', pattern: '^[a-z.]+$' },
  ]);
});

test('an empty relevant list means every allowed value is relevant', () => {
  const fields = [...validFields(), ['record_type', 'ListItem', ['A', 'AAAA'], []]];
  const config = validateConfig(withFields(fields), { env: {} });
  const recordType = config.pipeline.log_collection.collectors[0]?.required_log_information[4];
  assert.deepEqual(recordType, { name: 'record_type', type: 'ListItem', allowed: ['A', 'AAAA'] });
});

test('a collector without a ts field is an error', () => {
  const fields = validFields().filter(([name]) => name !== 'ts');
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}: expected a field named "ts" (Timestamp), got ["status_code","src_ip","domain_name"] ("ts" is required)`,
  ]);
});

test('a collector without a src_ip field is an error', () => {
  const fields = validFields().filter(([name]) => name !== 'src_ip');
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}: expected a field named "src_ip" (IpAddress), got ["ts","status_code","domain_name"] ("src_ip" is required)`,
  ]);
});

test('a required field of the wrong type is an error', () => {
  const fields = validFields().map((field) => (field[0] === 'src_ip' ? ['src_ip', 'RegEx', '.*'] : field));
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[2][1]: expected "IpAddress" for the required field "src_ip", got "RegEx"`,
  ]);
});

test('a reserved field name is an error', () => {
  const fields = [...validFields(), ['logline_id', 'RegEx', '.*']];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][0]: expected field name other than the reserved logline_id, batch_id, subnet_id, got "logline_id"`,
  ]);
});

test('a duplicate field name is an error', () => {
  const fields = [...validFields(), ['src_ip', 'IpAddress']];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][0]: expected unique field name, got "src_ip" (already defined at [2])`,
  ]);
});

test('a relevant list that is not a subset of the allowed list is an error', () => {
  const fields = validFields().map((field) =>
    field[0] === 'status_code'
      ? ['status_code', 'ListItem', ['NOERROR', 'NXDOMAIN'], ['NXDOMAIN', 'SERVFAIL']]
      : field,
  );
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[1][3]: expected subset of the allowed values ["NOERROR","NXDOMAIN"], got ["NXDOMAIN","SERVFAIL"] (not allowed: "SERVFAIL")`,
  ]);
});

test('a ListItem without an allowed list is an error', () => {
  const fields = [...validFields(), ['record_type', 'ListItem']];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][2]: expected non-empty list of allowed values, got nothing`,
  ]);
});

test('a non-string ListItem value asks for quoting', () => {
  const fields = [...validFields(), ['rcode', 'ListItem', ['200', 404]]];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][2][1]: expected string (quote values that YAML reads as numbers), got 404`,
  ]);
});

test('a regular expression that does not compile is an error with the reason', () => {
  const fields = [...validFields(), ['size', 'RegEx', '^(\\d+b$']];
  const [line] = errorLines(fields);
  assert.match(
    line ?? '',
    new RegExp(
      `^config\\.yaml: ${escape(FIELDS_PATH)}\\[4\\]\\[2\\]: expected regular expression that compiles \\(RE2 syntax\\), got "\\^\\(\\\\\\\\d\\+b\\$" \\(error parsing regexp: missing closing \\): .+\\)$`,
    ),
  );
});

test('a RegEx without a pattern is an error', () => {
  const fields = [...validFields(), ['size', 'RegEx']];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][2]: expected regular expression string, got nothing`,
  ]);
});

test('a Timestamp without a format is an error', () => {
  const fields = validFields().map((field) => (field[0] === 'ts' ? ['ts', 'Timestamp'] : field));
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[0][2]: expected strptime format string, e.g. "%Y-%m-%dT%H:%M:%S", got nothing`,
  ]);
});

test('a Timestamp format with an unknown directive is an error', () => {
  const fields = validFields().map((field) => (field[0] === 'ts' ? ['ts', 'Timestamp', '%Y-%m-%Q'] : field));
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[0][2]: expected strptime format with supported directives (%Y %m %d %H %M %S %f %z %Z %y %j %b %B %I %p %a %A %%), got "%Y-%m-%Q" (unsupported: %Q)`,
  ]);
});

test('an IpAddress with an argument is an error', () => {
  const fields = validFields().map((field) =>
    field[0] === 'src_ip' ? ['src_ip', 'IpAddress', 'v4'] : field,
  );
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[2][2]: expected nothing (IpAddress takes no argument), got "v4"`,
  ]);
});

test('an unknown field type lists the known types', () => {
  const fields = [...validFields(), ['port', 'Integer']];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][1]: expected one of "Timestamp", "IpAddress", "RegEx", "ListItem", got "Integer"`,
  ]);
});

test('field problems and a missing ts are reported together', () => {
  const fields = [
    ['status_code', 'ListItem', ['NOERROR'], ['NXDOMAIN']],
    ['src_ip', 'IpAddress'],
    ['batch_id', 'RegEx', '('],
  ];
  const lines = errorLines(fields);
  assert.equal(lines.length, 4, lines.join('\n'));
  assert.ok(lines.some((line) => line.includes(`${FIELDS_PATH}[0][3]: expected subset`)));
  assert.ok(
    lines.some((line) => line.includes(`${FIELDS_PATH}[2][2]: expected regular expression that compiles`)),
  );
  assert.ok(
    lines.some((line) => line.includes(`${FIELDS_PATH}[2][0]: expected field name other than the reserved`)),
  );
  assert.ok(lines.some((line) => line.includes(`${FIELDS_PATH}: expected a field named "ts"`)));
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// v2.0.0's own pattern is rewritten (test/unit/config/compat.test.ts); a minimum length is not.
test('a lookaround pattern without an RE2 form is refused with the lookaround-free domain pattern shown', () => {
  const python = '^(?=.{4,253}$)((?!-)[A-Za-z0-9-]{1,63}(?<!-)\\.)+[A-Za-z]{2,63}$';
  const fields = [...validFields(), ['fqdn', 'RegEx', python]];
  const [line] = errorLines(fields);
  assert.ok(
    line?.startsWith(
      `config.yaml: ${FIELDS_PATH}[4][2]: expected regular expression without lookaround (RE2 syntax, matched in linear time)`,
    ),
    line,
  );
  assert.ok(line?.includes(`[domain_name, RegEx, '${DOMAIN_NAME_PATTERN}', 253]`), line);
  assert.ok(line?.includes('not rewritten automatically: ^(?=.{4,253}$): a minimum length of 4'), line);
});

test('a RegEx takes a maximum length as its fourth element', () => {
  const fields = [...validFields(), ['fqdn', 'RegEx', DOMAIN_NAME_PATTERN, 253]];
  const config = validateConfig(withFields(fields), { env: {} });
  assert.deepEqual(config.pipeline.log_collection.collectors[0]?.required_log_information[4], {
    name: 'fqdn',
    type: 'RegEx',
    pattern: DOMAIN_NAME_PATTERN,
    maxLength: 253,
  });
});

test('a RegEx maximum length that is not a positive integer is an error', () => {
  const fields = [...validFields(), ['fqdn', 'RegEx', '^a', 0]];
  assert.deepEqual(errorLines(fields), [
    `config.yaml: ${FIELDS_PATH}[4][3]: expected positive integer (longest value accepted), got 0`,
  ]);
});

test('subnet_id is a reserved name: the collector writes it', () => {
  const fields = [...validFields(), ['subnet_id', 'IpAddress']];
  assert.match(errorLines(fields)[0] ?? '', /\[4\]\[0\]: expected field name other than the reserved/);
});
