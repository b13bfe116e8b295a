import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FEATURE_NAMES,
  domainFeatures,
  nameParts,
  shannonEntropy,
} from '../../../../src/stages/detector/features.ts';

const feature = (values: Float64Array, name: string): number => {
  const i = FEATURE_NAMES.indexOf(name);
  assert.ok(i >= 0, `no feature ${name}`);
  return values[i] ?? NaN;
};
const close = (actual: number, expected: number, name: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${name}: ${actual} != ${expected}`);

test('there are 44 features with distinct names', () => {
  assert.equal(FEATURE_NAMES.length, 44);
  assert.equal(new Set(FEATURE_NAMES).size, 44);
  assert.equal(domainFeatures('example.com').length, 44);
});

test('name parts come from the public suffix list, not from the last two labels', () => {
  assert.deepEqual(nameParts('a.b.Example.CO.UK.'), {
    name: 'a.b.example.co.uk',
    thirdLevel: 'a.b',
    secondLevel: 'example',
  });
  assert.deepEqual(nameParts('example.com'), { name: 'example.com', thirdLevel: '', secondLevel: 'example' });
  assert.deepEqual(nameParts('co.uk'), { name: 'co.uk', thirdLevel: '', secondLevel: '' });
});

test('entropy of a string: bits per character of its character distribution', () => {
  assert.equal(shannonEntropy(''), 0);
  assert.equal(shannonEntropy('aaaa'), 0);
  assert.equal(shannonEntropy('abab'), 1);
  assert.equal(shannonEntropy('abcd'), 2);
});

test('www.Ex4mple.co.uk. has the hand-computed 44 features', () => {
  // name "www.ex4mple.co.uk": 17 characters, 13 letters, 1 digit, 3 dots; labels www|ex4mple|co|uk.
  const f = domainFeatures('www.Ex4mple.co.uk.');
  assert.equal(feature(f, 'label_count'), 4);
  assert.equal(feature(f, 'label_max_length'), 7);
  assert.equal(feature(f, 'name_length'), 17);
  const letters: Record<string, number> = { w: 3, e: 2, x: 1, m: 1, p: 1, l: 1, c: 1, o: 1, u: 1, k: 1 };
  for (const ch of 'abcdefghijklmnopqrstuvwxyz')
    close(feature(f, `freq_${ch}`), (letters[ch] ?? 0) / 17, `freq_${ch}`);
  // third level "www"
  assert.deepEqual(
    ['present', 'letter_ratio', 'digit_ratio', 'symbol_ratio'].map((k) => feature(f, `third_level_${k}`)),
    [1, 1, 0, 0],
  );
  // second level "ex4mple": 6 letters, 1 digit of 7
  close(feature(f, 'second_level_present'), 1, 'second_level_present');
  close(feature(f, 'second_level_letter_ratio'), 6 / 7, 'second_level_letter_ratio');
  close(feature(f, 'second_level_digit_ratio'), 1 / 7, 'second_level_digit_ratio');
  close(feature(f, 'second_level_symbol_ratio'), 0, 'second_level_symbol_ratio');
  // whole name: 13 letters, 1 digit, 3 dots of 17
  close(feature(f, 'fqdn_present'), 1, 'fqdn_present');
  close(feature(f, 'fqdn_letter_ratio'), 13 / 17, 'fqdn_letter_ratio');
  close(feature(f, 'fqdn_digit_ratio'), 1 / 17, 'fqdn_digit_ratio');
  close(feature(f, 'fqdn_symbol_ratio'), 3 / 17, 'fqdn_symbol_ratio');
  // entropies: "www" 0; "ex4mple" e twice, five others once;
  // whole name w 3, . 3, e 2, nine characters once.
  close(feature(f, 'third_level_entropy'), 0, 'third_level_entropy');
  close(
    feature(f, 'second_level_entropy'),
    (2 / 7) * Math.log2(7 / 2) + 5 * (1 / 7) * Math.log2(7),
    'second_level_entropy',
  );
  close(
    feature(f, 'fqdn_entropy'),
    2 * (3 / 17) * Math.log2(17 / 3) + (2 / 17) * Math.log2(17 / 2) + 9 * (1 / 17) * Math.log2(17),
    'fqdn_entropy',
  );
});

test('a registered domain without subdomain has an absent third level (all zero)', () => {
  const f = domainFeatures('google.com');
  for (const k of ['present', 'letter_ratio', 'digit_ratio', 'symbol_ratio', 'entropy'])
    assert.equal(feature(f, `third_level_${k}`), 0, k);
  assert.equal(feature(f, 'second_level_letter_ratio'), 1);
  assert.equal(feature(f, 'second_level_entropy'), shannonEntropy('google'));
});

test('a hyphen counts as a symbol in the second-level label', () => {
  const f = domainFeatures('my-site.org');
  close(feature(f, 'second_level_symbol_ratio'), 1 / 7, 'second_level_symbol_ratio');
  close(feature(f, 'fqdn_symbol_ratio'), 2 / 11, 'fqdn_symbol_ratio');
});
