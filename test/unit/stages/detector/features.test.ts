import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shannonEntropy } from '../../../../src/stages/detector/domainator/similarity.ts';
import { ngramScore, wordCover } from '../../../../src/stages/detector/dga-features/label-stats.ts';
import { trigramModel } from '../../../../src/stages/detector/dga-features/lexicon.ts';
import { SUFFIX_KIND, splitName } from '../../../../src/stages/detector/dga-features/name-split.ts';
import { FEATURE_NAMES, domainFeatures } from '../../../../src/stages/detector/dga-features/vector.ts';
import { WordTrie } from '../../../../src/stages/detector/dga-features/word-trie.ts';

const lexicon = {
  trigram: trigramModel([
    'house',
    'mouse',
    'horse',
    'garden',
    'green',
    'server',
    'home',
    'mail',
    'www',
    'web',
  ]),
  words: new WordTrie(['home', 'garden', 'server', 'green', 'house', 'mail']),
};
const feature = (values: Float64Array, name: string): number => {
  const i = FEATURE_NAMES.indexOf(name);
  assert.ok(i >= 0, `no feature ${name}`);
  return values[i] ?? NaN;
};

test('feature names are distinct and every name gets one value per feature', () => {
  assert.equal(new Set(FEATURE_NAMES).size, FEATURE_NAMES.length);
  assert.equal(domainFeatures('example.com', lexicon).length, FEATURE_NAMES.length);
});

test('the registrable label is split with the private section: a dynamic-DNS customer label is scored', () => {
  assert.deepEqual(splitName('x7fk2q.ddns.net'), {
    name: 'x7fk2q.ddns.net',
    registrable: 'x7fk2q',
    subdomains: [],
    suffix: 'ddns.net',
    suffixKind: SUFFIX_KIND.customerNamed,
  });
  // Not in the list: a dynamic-DNS parent of our own table.
  assert.equal(splitName('abcdef.yi.org').registrable, 'abcdef');
  assert.equal(splitName('abcdef.yi.org').suffixKind, SUFFIX_KIND.customerNamed);
  // The provider assigns the label: randomness is normal there.
  assert.equal(splitName('d111111abcdef8.cloudfront.net').suffixKind, SUFFIX_KIND.providerAssigned);
  assert.equal(splitName('www.Example.CO.UK.').registrable, 'example');
  assert.deepEqual(splitName('www.example.co.uk').subdomains, ['www']);
  // A name that is itself a suffix (wildcard entry): its first label.
  assert.equal(splitName('ec2-1-2-3-4.compute-1.amazonaws.com').registrable, 'ec2-1-2-3-4');
});

test('conventional host labels at the left are not measured; other labels and registrable ones are', () => {
  const bare = domainFeatures('xkqzvwtp.com', lexicon);
  for (const name of ['www.xkqzvwtp.com', 'ns2.mail.xkqzvwtp.com', 'WWW3.xkqzvwtp.com.'])
    assert.deepEqual(domainFeatures(name, lexicon), bare, name);
  const random = domainFeatures('q9zx7k.xkqzvwtp.com', lexicon);
  assert.equal(feature(random, 'subdomain_length'), 6);
  for (const name of FEATURE_NAMES.filter((n) => n.startsWith('registrable_')))
    assert.equal(feature(random, name), feature(bare, name), name);
  // `mail` is the registrable label of mail.com, not a host label in front of it.
  assert.equal(feature(domainFeatures('mail.com', lexicon), 'registrable_length'), 4);
});

test('the least word-like subdomain label is the one measured', () => {
  const f = domainFeatures('www.q9zx7k.mail.example.com', lexicon);
  assert.equal(feature(f, 'subdomain_length'), 6);
  // www goes; mail stays, as it is not at the left.
  assert.equal(feature(f, 'subdomain_depth'), 2);
});

test('word cover: most letters covered, then fewest words, with the words mean rarity', () => {
  const [coverage, words, rarity] = wordCover('homegarden', lexicon);
  assert.equal(coverage, 1);
  assert.equal(words, 2);
  // ranks 0 and 1 of 6 words: rarity log(rank + 1) / log(6)
  assert.ok(Math.abs(rarity - (0 + Math.log(2) / Math.log(6)) / 2) < 1e-6);
  assert.deepEqual(wordCover('qqqq', lexicon), [0, 0, 1]);
  assert.equal(wordCover('xxhomexx', lexicon)[0], 0.5);
});

test('letter trigrams of benign text score higher than letters no word writes', () => {
  assert.ok(ngramScore('house', lexicon)[0] > ngramScore('xqzvk', lexicon)[0]);
  assert.ok(ngramScore('house', lexicon)[1] > ngramScore('hxqse', lexicon)[1], 'the least likely trigram');
});

test('label statistics: digits, alternation and hex', () => {
  const f = domainFeatures('a1b2c3d4e5.com', lexicon);
  assert.equal(feature(f, 'registrable_digit_ratio'), 0.5);
  assert.equal(feature(f, 'registrable_class_switches'), 9 / 10);
  assert.equal(feature(f, 'registrable_is_hex'), 1);
  assert.equal(feature(domainFeatures('my-site.org', lexicon), 'registrable_symbol_count'), 1);
});

test("the Domainator's entropy: bits per character", () => {
  assert.equal(shannonEntropy('abab'), 1);
  assert.equal(shannonEntropy(''), 0);
});
