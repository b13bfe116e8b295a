import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { alertView } from '../../../../src/app/dashboard/alert-view.ts';
import { withKind } from '../../../../src/stages/detector/attribution.ts';
import { parseDgaModel } from '../../../../src/stages/detector/model/dga-model.ts';
import type { Alert } from '../../../../src/stages/messages.ts';
import { dgaModelFile } from '../../../support/dga-model.ts';

const shipped = parseDgaModel(JSON.parse(readFileSync('models/dga-gbt.json', 'utf8')));
const line = (domain_name: string, i: number) => ({
  logline_id: `l${i}`,
  subnet_id: 's',
  ts: '2026-12-01T00:00:00.000Z',
  src_ip: '10.0.0.1',
  domain_name,
});
const alertOf = (names: string[]): Alert => ({
  overall_score: 0.99,
  result: names.map((n, i) => ({ request: line(n, i), probability: 0.99 })),
  src_ip: '10.0.0.1',
  alert_timestamp: '2026-12-01T00:00:00.000Z',
  suspicious_batch_id: 'b',
  detector_name: 'dga_detector',
});

test('an alert names the kind of DGA its names look like, with the share of votes', () => {
  const hex = withKind(
    alertOf([
      'f1eb0b9b3abc8b55035b2458010b4dae.info',
      '02237cc6767d7e535b1b918ebf2ca8f6.info',
      'd3b07384d113edec49eaa6238ad5ff00.org',
    ]),
    shipped,
  );
  assert.equal(hex.kind, 'hex DGA');
  assert.ok((hex.kind_confidence ?? 0) > 0.5 && (hex.kind_confidence ?? 0) <= 1);
  const words = withKind(alertOf(['barefootknap.net', 'homologycrinums.net', 'pikakeemptysis.net']), shipped);
  assert.equal(words.kind, 'dictionary DGA');
});

test('the dashboard shows the kind and its confidence from the alert row', () => {
  const alert = withKind(
    alertOf(['f1eb0b9b3abc8b55035b2458010b4dae.info', '02237cc6767d7e535b1b918ebf2ca8f6.info']),
    shipped,
  );
  const view = alertView({
    client_ip: alert.src_ip,
    alert_timestamp: 0,
    overall_score: alert.overall_score,
    domain_names: '[]',
    result: JSON.stringify(alert.result),
    suspicious_batch_id: 'b',
  });
  assert.match(view.family, /^hex DGA \(\d+ %\)$/);
});

test('a model without kind heads leaves the alert as it was', () => {
  const plain = parseDgaModel(dgaModelFile([[[-1, 0]]]));
  const alert = alertOf(['a.com']);
  assert.deepEqual(withKind(alert, plain), alert);
});
