// Shared by the dashboard pages: JSON polling, uPlot charts, formatting. Plain ES module, no build.
import uPlot from '/vendor/uPlot.esm.js';

export const PALETTE = [
  '#2563eb',
  '#16a34a',
  '#dc2626',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#ca8a04',
  '#db2777',
  '#4b5563',
];

export async function getJSON(path) {
  const res = await fetch(path, { cache: 'no-store' });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

/** Runs `tick` now and every `ms`; a failure shows in the status line and the next tick tries again. */
export function poll(tick, ms) {
  const status = document.getElementById('status');
  const run = async () => {
    try {
      const errors = (await tick()) ?? [];
      status.textContent = `updated ${new Date().toLocaleTimeString()}`;
      status.className = errors.length ? 'status warn' : 'status';
      if (errors.length) status.textContent += ` · ${errors.join(' · ')}`;
    } catch (e) {
      status.textContent = `update failed: ${e.message}`;
      status.className = 'status error';
    } finally {
      setTimeout(run, ms);
    }
  };
  return run();
}

/** Elements by tag with attributes and children (strings become text nodes, never HTML). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export const fmtTime = (ms) => new Date(ms).toLocaleTimeString();
export const fmtDateTime = (ms) => new Date(ms).toLocaleString();
export const fmtNum = (n) =>
  n === null || n === undefined ? '–' : Number(n).toLocaleString(undefined, { maximumFractionDigits: 2 });
export const fmtMs = (ms) =>
  ms === null || ms === undefined ? '–' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;

/**
 * `series`: [{name, values}] aligned on `t` (epoch s). Non-null, non-zero points are counted on the
 * element; with `zeroIsData`, zeros count too (a lag of 0 is a measurement, not an absence).
 */
function countPoints(series, zeroIsData = false) {
  let n = 0;
  for (const s of series)
    for (const v of s.values) if (v !== null && (zeroIsData || v !== 0) && Number.isFinite(v)) n++;
  return n;
}

/**
 * A uPlot chart in `el` that follows the data it is given: `update({t, series})` replaces the data,
 * and rebuilds the chart when the set of series changes. `opts.points` draws points instead of
 * lines (scatter); `opts.unit` labels the y axis; `opts.zeroIsData`: zeros are data, not an empty chart.
 */
export function chart(el, opts = {}) {
  let plot;
  let key = '';
  const body = el.querySelector('.chart-body');
  const empty = el.querySelector('.chart-empty');
  const build = (data) => {
    plot?.destroy();
    const width = Math.max(300, body.clientWidth);
    plot = new uPlot(
      {
        width,
        height: opts.height ?? 220,
        legend: { show: true, live: false },
        cursor: { points: { show: false } },
        scales: {
          x: { time: true },
          y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          { stroke: '#475569', grid: { stroke: '#e2e8f0' }, space: 80 },
          { stroke: '#475569', grid: { stroke: '#e2e8f0' }, size: 60, label: opts.unit, labelSize: 14 },
        ],
        series: [
          {},
          ...data.series.map((s, i) => ({
            label: s.name,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            spanGaps: opts.spanGaps ?? false,
            ...(opts.points
              ? { paths: () => null, points: { show: true, size: 6, fill: PALETTE[i % PALETTE.length] } }
              : { points: { show: false } }),
          })),
        ],
      },
      [data.t, ...data.series.map((s) => s.values)],
      body,
    );
  };
  const api = {
    update(data) {
      const points = data ? countPoints(data.series, opts.zeroIsData) : 0;
      el.dataset.points = String(points);
      empty.hidden = points > 0;
      if (!data || data.series.length === 0) {
        plot?.destroy();
        plot = undefined;
        key = '';
        return;
      }
      const next = data.series.map((s) => s.name).join('\u0000');
      if (next !== key || !plot) {
        key = next;
        build(data);
      } else plot.setData([data.t, ...data.series.map((s) => s.values)]);
    },
  };
  new ResizeObserver(() =>
    plot?.setSize({ width: Math.max(300, body.clientWidth), height: opts.height ?? 220 }),
  ).observe(body);
  return api;
}

/**
 * Per-bucket counts to per-second rates. The last bucket is still filling: its count is divided by
 * the time elapsed in it (at least half a bucket, so its first moments do not spike), and the line
 * does not drop at the right edge.
 */
export function perSecond(aligned, bucketMs, now) {
  if (!aligned) return null;
  const last = aligned.t.length - 1;
  const seconds = (i) =>
    (i === last && now !== undefined ? Math.max(bucketMs / 2, now - aligned.t[i] * 1000) : bucketMs) / 1000;
  return {
    t: aligned.t,
    series: aligned.series.map((s) => ({
      name: s.name,
      values: s.values.map((v, i) => (v === null ? null : v / seconds(i))),
    })),
  };
}

/** Fills a table body with rows of cells (strings, numbers or elements). */
export function fillTable(tbody, rows) {
  tbody.replaceChildren(
    ...rows.map((cells) =>
      h('tr', {}, ...cells.map((c) => (c instanceof Node && c.tagName === 'TD' ? c : h('td', {}, c ?? '')))),
    ),
  );
}

/** Shortens the full stage names (`data_analysis.detector` -> `detector`) for legends and tables. */
export const shortStage = (name) => name.replace(/^[a-z_]+\./, '');
