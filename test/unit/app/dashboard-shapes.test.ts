import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alertView, parseDomains } from '../../../src/app/dashboard/alert-view.ts';
import { bucketFor } from '../../../src/app/dashboard/dashboard-queries.ts';
import { align, bucketGrid } from '../../../src/app/dashboard/series.ts';

test('domain lists are read from JSON arrays and from plain comma or space lists', () => {
  assert.deepEqual(parseDomains('["a.com","b.net"]'), ['a.com', 'b.net']);
  assert.deepEqual(parseDomains('a.com, b.net c.org'), ['a.com', 'b.net', 'c.org']);
  assert.deepEqual(parseDomains('  '), []);
});

test("an alert's family and detector come from its result when the lineage names no detector", () => {
  const a = alertView({
    client_ip: '10.0.0.5',
    alert_timestamp: '1700000000000',
    overall_score: 0.9,
    domain_names: '["x.com"]',
    result: '[{"detector_name":"domainator","family":"tunnel"}]',
    suspicious_batch_id: 's1',
    detector: '',
  });
  assert.equal(a.time, 1_700_000_000_000);
  assert.equal(a.detector, 'domainator');
  assert.equal(a.family, 'tunnel');
  const b = alertView({ client_ip: 'h', result: 'not json', detector: 'dga_detector' });
  assert.equal(b.detector, 'dga_detector');
  assert.equal(b.family, '');
  const row = { client_ip: 'h', result: '[]', detector: '' };
  assert.equal(alertView(row).detector, '', 'not known yet');
  assert.equal(alertView(row, 'dga_detector').detector, 'dga_detector', 'the one detector configured');
  assert.equal(alertView({ ...row, detector: 'other' }, 'dga_detector').detector, 'other');
});

test('series are aligned on a full bucket grid: counts fill with 0, latencies leave gaps', () => {
  const grid = bucketGrid(10_500, 14_000, 1000);
  assert.deepEqual(grid, [10_000, 11_000, 12_000, 13_000, 14_000]);
  const rows = [
    { stage: 'b', t: '11000', n: '3' },
    { stage: 'a', t: 13_000, n: 2 },
    { stage: 'a', t: 99_000, n: 9 },
  ];
  assert.deepEqual(
    align(rows, grid, (r) => String(r.stage), 'n', 0),
    {
      t: [10, 11, 12, 13, 14],
      series: [
        { name: 'a', values: [0, 0, 0, 2, 0] },
        { name: 'b', values: [0, 3, 0, 0, 0] },
      ],
    },
  );
  assert.deepEqual(align(rows, grid, (r) => String(r.stage), 'n', null).series[1]?.values, [
    null,
    3,
    null,
    null,
    null,
  ]);
});

test('buckets give about 180 points per window in whole seconds', () => {
  assert.equal(bucketFor(15 * 60_000), 5000);
  assert.equal(bucketFor(60_000), 1000);
  assert.equal(bucketFor(60 * 60_000), 20_000);
});
