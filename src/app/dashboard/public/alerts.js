import { chart, fmtDateTime, getJSON, h, poll } from '/static/common.js';

const params = new URLSearchParams(location.search);
const input = document.getElementById('host');
input.value = params.get('host') ?? '';
document.getElementById('filter').addEventListener('submit', (e) => {
  e.preventDefault();
  const host = input.value.trim();
  history.replaceState(null, '', host ? `/alerts?host=${encodeURIComponent(host)}` : '/alerts');
  seen.clear();
  first = true;
  tick().catch(() => undefined);
});

const scores = chart(document.getElementById('chart-scores'), { points: true });
const seen = new Set();
let first = true;

/** Scatter data: one series per host (the 8 with most alerts, the rest as "other"). */
function scoreSeries(alerts) {
  const counts = new Map();
  for (const a of alerts) counts.set(a.host, (counts.get(a.host) ?? 0) + 1);
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([host]) => host);
  const name = (host) => (top.includes(host) ? host : 'other');
  const names = [...new Set(alerts.map((a) => name(a.host)))];
  const sorted = [...alerts].sort((a, b) => a.time - b.time);
  const t = [...new Set(sorted.map((a) => a.time / 1000))];
  const index = new Map(t.map((x, i) => [x, i]));
  const series = names.map((n) => ({ name: n, values: t.map(() => null) }));
  for (const a of sorted) series[names.indexOf(name(a.host))].values[index.get(a.time / 1000)] = a.score;
  return { t, series };
}

async function tick() {
  const host = input.value.trim();
  const alerts = await getJSON(`/api/alerts?limit=500${host ? `&host=${encodeURIComponent(host)}` : ''}`);
  document.getElementById('count').textContent = `${alerts.length} alert(s)`;
  scores.update(scoreSeries(alerts));
  const rows = alerts.map((a) => {
    const id = `${a.suspiciousBatchId}|${a.host}|${a.time}`;
    const isNew = !first && !seen.has(id);
    seen.add(id);
    return h(
      'tr',
      { class: isNew ? 'new' : '', 'data-host': a.host, 'data-time': String(a.time) },
      h('td', {}, fmtDateTime(a.time)),
      h('td', {}, h('a', { href: `/host?ip=${encodeURIComponent(a.host)}` }, a.host)),
      h(
        'td',
        { class: 'num' },
        h('span', { class: 'score', style: `width:${Math.round(a.score * 60)}px` }),
        a.score.toFixed(3),
      ),
      h('td', {}, a.detector || '–'),
      h('td', {}, a.family || '–'),
      h(
        'td',
        { class: 'domains' },
        a.domains.slice(0, 6).join(', ') + (a.domains.length > 6 ? ` … (+${a.domains.length - 6})` : ''),
      ),
    );
  });
  document.getElementById('alerts-table').replaceChildren(...rows);
  first = false;
}

const config = await getJSON('/api/config');
poll(tick, config.refreshMs);
