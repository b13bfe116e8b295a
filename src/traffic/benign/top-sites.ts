import { createRequire } from 'node:module';
import { realListSource } from './source.ts';

const require = createRequire(import.meta.url);

/**
 * The Moz Top 500 as the `top-sites` package ships it (1.1.222, MIT, Kiko Beats): domains and pages such
 * as `www.google.com`, `youtube.com`, `support.google.com`. Its `rootDomain` strings are copied into
 * data/top-sites.json (licence beside it) instead of depending on the package: its postinstall script
 * scrapes the web and fails without network, which would break `npm rebuild` in scripts/setup.sh.
 */
export const topSites = realListSource(
  'top-sites',
  'Moz Top 500 domains and pages (www.google.com, support.google.com, ...): the rootDomain field of ' +
    'top-sites@1.1.222 (MIT), copied into src/traffic/benign/data/top-sites.json',
  () => require('./data/top-sites.json') as string[],
);
