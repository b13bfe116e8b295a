import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DASHBOARD_PAGES, pageDocument } from '../../../src/app/dashboard/pages.ts';

const PUBLIC = new URL('../../../src/app/dashboard/public/', import.meta.url);

test('every page is its main element in the shared document, its own nav link active, its own script', () => {
  for (const page of DASHBOARD_PAGES) {
    const main = readFileSync(new URL(page.main, PUBLIC), 'utf8');
    assert.match(main, /^<main>[\s\S]*<\/main>\s*$/, `${page.main} holds only the main element`);
    const html = pageDocument(page, main);
    assert.match(html, new RegExp(`<title>HAMSTRING · ${page.name.toLowerCase()}</title>`));
    assert.deepEqual(
      [...html.matchAll(/<a href="([^"]+)" class="active">/g)].map((m) => m[1]),
      [page.path],
    );
    assert.equal(
      [...html.matchAll(/<nav>.*?<\/nav>/g)][0]?.[0].match(/<a /g)?.length,
      DASHBOARD_PAGES.length,
    );
    assert.ok(html.includes(`<script type="module" src="/static/${page.script}"></script>`));
    assert.ok(html.includes(main.trimEnd()));
    assert.ok(html.includes('<span id="status" class="status">'), 'the status line common.js fills');
  }
});
