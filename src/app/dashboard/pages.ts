/** A dashboard page: where it is served, its name in the title and the nav, and its own files. */
export interface DashboardPage {
  path: string;
  name: string;
  /** The page's `<main>` element, in the public folder. */
  main: string;
  /** The page's module script, served under /static/. */
  script: string;
}

export const DASHBOARD_PAGES: readonly DashboardPage[] = [
  { path: '/', name: 'Pipeline', main: 'pipeline.main.html', script: 'pipeline.js' },
  { path: '/alerts', name: 'Alerts', main: 'alerts.main.html', script: 'alerts.js' },
  { path: '/host', name: 'Host', main: 'host.main.html', script: 'host.js' },
];

/**
 * The whole document of `page` around its `<main>`: every page shares the head, the header with
 * the nav (the page's own link marked active) and the status line that common.js fills.
 */
export function pageDocument(page: DashboardPage, main: string): string {
  const nav = DASHBOARD_PAGES.map(
    (p) => `<a href="${p.path}"${p === page ? ' class="active"' : ''}>${p.name}</a>`,
  ).join('');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <title>HAMSTRING · ${page.name.toLowerCase()}</title>
    <link rel="stylesheet" href="/vendor/uPlot.min.css" />
    <link rel="stylesheet" href="/static/app.css" />
  </head>
  <body>
    <header>
      <h1>HAMSTRING</h1>
      <nav>${nav}</nav>
      <span id="status" class="status">loading…</span>
    </header>
${main.trimEnd()}
    <script type="module" src="/static/${page.script}"></script>
  </body>
</html>
`;
}
