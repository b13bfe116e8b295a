import {
  chart,
  fillTable,
  fmtMs,
  fmtNum,
  fmtTime,
  getJSON,
  h,
  perSecond,
  poll,
  shortStage,
} from '/static/common.js';

/** Only stages wrapped with withBatchEvents (src/monitoring/batch-events.ts) write worker_batches. */
const NO_BATCH_EVENTS =
  'no worker_batches rows in the window: only stages wrapped with withBatchEvents write them (hamstring up does not)';

const NO_SENSORS =
  'no sensor reports to this dashboard: configure pipeline.sensors (hamstring up), or npm start -- --source unbound';

const CONDITIONS = [
  'max_poll_exceeded_or_unknown_member',
  'repeated_recovery_after_revoke',
  'aborts_while_lag_grows',
  'no_commit_while_input_arrives',
  'records_below_commit',
];

const charts = {
  volume: chart(document.getElementById('chart-volume')),
  stageLines: chart(document.getElementById('chart-stage-lines')),
  latency: chart(document.getElementById('chart-latency'), { spanGaps: true, unit: 's' }),
  fill: chart(document.getElementById('chart-fill'), { spanGaps: true }),
  records: chart(document.getElementById('chart-records')),
  // A stage that keeps up reports a lag of 0 at every sample: the chart shows that, not 'no data'.
  lag: chart(document.getElementById('chart-lag'), { zeroIsData: true }),
  txn: chart(document.getElementById('chart-txn')),
};

const renamed = (aligned) =>
  aligned && {
    t: aligned.t,
    series: aligned.series.map((s) => ({ name: shortStage(s.name), values: s.values })),
  };

function metricSeries(series, pick) {
  return { t: series.t, series: series.stages.map((s) => ({ name: shortStage(s.stage), values: s[pick] })) };
}

/** Sums one rate over the stages, per sample. */
function total(series, pick) {
  return series.t.map((_, i) => {
    let sum = null;
    for (const s of series.stages) if (s[pick][i] !== null) sum = (sum ?? 0) + s[pick][i];
    return sum;
  });
}

function cards(totals) {
  const items = [
    ['lines in', totals?.linesIn],
    ['valid lines', totals?.linesValid],
    ['failed lines', totals?.linesFailed],
    ['batches', totals?.batches],
    ['suspicious batches', totals?.suspiciousBatches],
    ['alerts', totals?.alerts],
    ['alerted hosts', totals?.alertedHosts],
  ];
  document
    .getElementById('cards')
    .replaceChildren(
      ...items.map(([label, value]) =>
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'label' }, label),
          h('div', { class: 'value' }, fmtNum(value)),
        ),
      ),
    );
}

function num(v) {
  return h('td', { class: 'num' }, fmtNum(v));
}

async function tick() {
  // Read beside the ClickHouse data: a Kafka that does not answer leaves the other panels alone.
  const instances = getJSON('/api/instances').catch((e) => e);
  const d = await getJSON('/api/pipeline');
  cards(d.totals);
  charts.volume.update(perSecond(d.volume, d.bucketMs, d.now));
  charts.stageLines.update(renamed(perSecond(d.stageLines, d.bucketMs, d.now)));
  charts.latency.update(
    d.stageP99 && {
      t: d.stageP99.t,
      series: d.stageP99.series.map((s) => ({
        name: shortStage(s.name),
        values: s.values.map((v) => (v === null ? null : v / 1000)),
      })),
    },
  );
  charts.fill.update(renamed(d.fillLevels));
  fillTable(
    document.getElementById('latency-table'),
    (d.latency ?? []).map((l) => [
      shortStage(l.stage),
      num(l.lines),
      h('td', { class: 'num' }, fmtMs(l.p50Ms)),
      h('td', { class: 'num' }, fmtMs(l.p99Ms)),
      h('td', { class: 'num' }, fmtMs(l.maxMs)),
    ]),
  );
  fillTable(
    document.getElementById('fill-table'),
    (d.currentFill ?? []).map((f) => [shortStage(f.stage), f.entryType, num(f.n), fmtTime(f.at)]),
  );
  const events = new Map();
  for (const e of d.workerEvents ?? []) {
    const row = events.get(e.stage) ?? { committed: 0, aborted: 0, recovered: 0, stale: 0, records: 0 };
    row[e.event] = (row[e.event] ?? 0) + e.n;
    if (e.event === 'committed') row.records += e.records;
    events.set(e.stage, row);
  }
  fillTable(
    document.getElementById('events-table'),
    events.size === 0
      ? [[h('td', { colspan: 6, class: 'hint' }, NO_BATCH_EVENTS)]]
      : [...events].map(([stage, r]) => [
          shortStage(stage),
          num(r.committed),
          num(r.aborted),
          num(r.recovered),
          num(r.stale),
          num(r.records),
        ]),
  );

  const m = d.metrics;
  for (const el of document.querySelectorAll('[data-none]')) if (!m) el.textContent = el.dataset.none;
  charts.records.update(m && metricSeries(m.series, 'recordsInPerSec'));
  charts.lag.update(m && metricSeries(m.series, 'lag'));
  charts.txn.update(
    m && {
      t: m.series.t,
      series: [
        { name: 'commits', values: total(m.series, 'commitsPerSec') },
        { name: 'aborts', values: total(m.series, 'abortsPerSec') },
        { name: 'recoveries', values: total(m.series, 'recoveriesPerSec') },
      ],
    },
  );
  fillTable(
    document.getElementById('workers-table'),
    (m?.latest ?? []).map((s) => [
      shortStage(s.stage),
      num(s.instances),
      num(s.ready),
      num(s.recordsIn),
      num(s.recordsOut),
      num(s.lag),
      num(s.commits),
      num(s.aborts),
      num(s.recoveries),
      ...CONDITIONS.map((c) =>
        h(
          'td',
          {},
          h(
            'span',
            { class: s.alerts[c] > 0 ? 'cond on' : 'cond', 'data-condition': c },
            s.alerts[c] > 0 ? `active (${s.alerts[c]})` : 'ok',
          ),
        ),
      ),
    ]),
  );
  const sensors = m?.sensors ?? [];
  fillTable(
    document.getElementById('sensors-table'),
    sensors.length === 0
      ? [[h('td', { colspan: 9, class: 'hint' }, NO_SENSORS)]]
      : sensors.map((s) => [
          s.sensor,
          s.kind,
          num(s.received),
          num(s.forwarded),
          num(s.ignored),
          num(s.malformed),
          num(s.dropped),
          num(s.failed),
          num(s.pending),
        ]),
  );
  const failing = (m?.sources ?? []).filter((s) => !s.ok);
  document.getElementById('sources').textContent = m
    ? `${m.sources.length} metrics source(s)${failing.length ? `; unreachable: ${failing.map((s) => `${s.source} (${s.error})`).join(', ')}` : ''}`
    : 'No metrics sources configured: the worker charts stay empty.';
  const stages = await instances;
  if (stages instanceof Error) return [...(d.errors ?? []), `instances: ${stages.message}`];
  fillTable(document.getElementById('instances-table'), instanceRows(stages));
  return d.errors;
}

/** One row per instance; a stage with no member (stopped, or its group unreadable) gets one row saying so. */
function instanceRows(stages) {
  if (stages === null)
    return [[h('td', { colspan: 6, class: 'hint' }, 'Kafka not configured for the dashboard')]];
  return stages.flatMap((s) => {
    const state = s.error ? `unreadable: ${s.error}` : s.state;
    const members = s.machines.flatMap((m) => m.instances.map((i) => [m.host, i]));
    if (members.length === 0)
      return [[s.stage, state, '', h('td', { class: 'hint' }, 'no instance'), num(0), '']];
    return members.map(([host, i]) => [
      s.stage,
      state,
      host,
      h('td', { class: 'mono' }, i.instance),
      num(i.partitions.length),
      h('td', { class: 'mono wrap' }, i.partitions.join(' ')),
    ]);
  });
}

const config = await getJSON('/api/config');
poll(tick, config.refreshMs);
