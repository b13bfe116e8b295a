import {
  chart,
  fillTable,
  fmtDateTime,
  fmtMs,
  fmtNum,
  getJSON,
  h,
  poll,
  shortStage,
} from '/static/common.js';

const params = new URLSearchParams(location.search);
const input = document.getElementById('ip');
input.value = params.get('ip') ?? '';
document.getElementById('pick').addEventListener('submit', (e) => {
  e.preventDefault();
  location.search = `?ip=${encodeURIComponent(input.value.trim())}`;
});
const latency = chart(document.getElementById('chart-host-latency'), { points: true, unit: 's' });

/** Scatter: x = line in, one series per stage, y = latency to that stage. */
function latencySeries(data) {
  const lines = [...data.lines].sort((a, b) => lineIn(a) - lineIn(b));
  const t = lines.map((l) => lineIn(l) / 1000);
  return {
    t,
    series: data.stages.map((stage) => ({
      name: shortStage(stage),
      values: lines.map((l) => (l.stages[stage] ? l.stages[stage].latencyMs / 1000 : null)),
    })),
  };
}

function lineIn(line) {
  let min = Infinity;
  for (const s of Object.values(line.stages)) min = Math.min(min, s.t - s.latencyMs);
  return Number.isFinite(min) ? min : line.timestamp;
}

async function tick() {
  const ip = input.value.trim();
  const hosts = await getJSON('/api/hosts?limit=60');
  document
    .getElementById('hosts')
    .replaceChildren(
      ...hosts.map((x) =>
        h(
          'a',
          { href: `/host?ip=${encodeURIComponent(x.host)}` },
          x.host,
          ` (${fmtNum(x.lines)})`,
          x.alerts > 0 ? h('span', { class: 'badge' }, `${x.alerts} alerts`) : '',
        ),
      ),
    );
  if (!ip) return [];
  document.getElementById('host-view').hidden = false;
  const data = await getJSON(`/api/host?ip=${encodeURIComponent(ip)}&limit=200`);
  document.getElementById('host-title').textContent =
    `Latency of ${ip}'s lines from line in to each stage (s)`;
  latency.update(latencySeries(data));
  fillTable(
    document.getElementById('host-alerts'),
    data.alerts.map((a) => [
      fmtDateTime(a.time),
      a.score.toFixed(3),
      a.detector || '–',
      a.family || '–',
      h('td', { class: 'domains' }, a.domains.slice(0, 8).join(', ')),
    ]),
  );
  document
    .getElementById('lines-head')
    .replaceChildren(
      h(
        'tr',
        {},
        h('th', {}, 'line time'),
        h('th', {}, 'domain'),
        h('th', {}, 'type'),
        h('th', {}, 'status'),
        ...data.stages.map((s) => h('th', {}, shortStage(s))),
      ),
    );
  fillTable(
    document.getElementById('lines-body'),
    data.lines.map((l) => [
      fmtDateTime(l.timestamp),
      h('td', { class: 'mono' }, String(l.fields.domain_name ?? l.fields.value ?? '')),
      l.recordType,
      l.status,
      ...data.stages.map((s) =>
        l.stages[s]
          ? `${fmtMs(l.stages[s].latencyMs)}${l.stages[s].status ? ` · ${l.stages[s].status}` : ''}`
          : '–',
      ),
    ]),
  );
  return data.errors;
}

const config = await getJSON('/api/config');
poll(tick, config.refreshMs);
