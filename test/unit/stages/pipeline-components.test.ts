import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { AT_LEAST_ONCE_KINDS } from '../../../src/app/builtin-stages.ts';
import { groundTruth } from '../../../src/app/demo.ts';
import {
  componentStage,
  pipelineComponents,
  selectComponent,
} from '../../../src/stages/pipeline-components.ts';
import { validateConfig, type HamstringConfig } from '../../../src/config/index.ts';
import type { Stage } from '../../../src/runtime/index.ts';

type Tree = Record<string, Record<string, unknown>>;

function shipped(edit: (tree: Record<string, Tree>) => void = () => {}): HamstringConfig {
  const tree = parseYaml(readFileSync('config.yaml', 'utf8')) as Record<string, Tree>;
  edit(tree);
  return validateConfig(tree);
}

/** The shipped config with a second collector and a prefilter reading it. */
function twoCollectors(): HamstringConfig {
  return shipped((tree) => {
    const collection = tree.pipeline!.log_collection as { collectors: Record<string, unknown>[] };
    collection.collectors.push({ ...collection.collectors[0], name: 'edge_collector' });
    const filters = tree.pipeline!.log_filtering as unknown as Record<string, unknown>[];
    filters.push({ ...filters[0], name: 'edge_prefilter', collector_name: 'edge_collector' });
  });
}

const stage = (name: string): Stage => ({
  name,
  inputTopics: ['in'],
  outputTopics: [],
  process: () => ({ outputs: [] }),
});

describe('pipeline components', () => {
  test('the shipped config: the DGA and the tunnel chain on one collector, upstream first, the generic alerter', () => {
    assert.deepEqual(
      pipelineComponents(shipped()).map((c) => `${c.kind}:${c.name}`),
      [
        'logserver:logserver',
        'collector:dga_collector',
        'prefilter:dga_prefilter',
        'prefilter:tunnel_prefilter',
        'inspector:dga_inspector',
        'inspector:tunnel_inspector',
        'detector:dga_detector',
        'detector:domainator',
        'alerter:generic',
      ],
    );
  });

  test('--name picks a component; without it the only one; unknown and ambiguous names are named', () => {
    const config = twoCollectors();
    assert.equal(selectComponent(config, 'collector', 'edge_collector').name, 'edge_collector');
    assert.equal(selectComponent(config, 'alerter', undefined).name, 'generic');
    assert.throws(
      () => selectComponent(config, 'collector', undefined),
      /2 collectors are configured \(dga_collector, edge_collector\): choose one with --name/,
    );
    assert.throws(
      () => selectComponent(config, 'collector', 'nope'),
      /--name nope: no collector of that name .*dga_collector, edge_collector/,
    );
    assert.throws(() => selectComponent(config, 'webhook', undefined), /no webhook is configured/);
  });

  test('a stage keeps its name when it is the only one of its kind, and takes the component in it otherwise', () => {
    const config = twoCollectors();
    const collector = selectComponent(config, 'collector', 'edge_collector');
    const alerter = selectComponent(config, 'alerter', undefined);
    assert.equal(
      componentStage(config, collector, stage('log_collection.collector')).name,
      'log_collection.collector-edge_collector',
    );
    assert.equal(
      componentStage(config, alerter, stage('data_alerting.alerter')).name,
      'data_alerting.alerter',
    );
  });

  test('the truth to find: DGA hosts always, the tunnelling host only with a Domainator detector', () => {
    const hosts = [
      { ip: '10.0.0.1', role: 'benign' as const },
      { ip: '10.0.0.2', role: 'dga' as const, family: 'necurs', malwareSeed: 1 },
      { ip: '10.0.0.3', role: 'tunnel' as const, domain: 't.io' },
    ];
    const withoutDomainator = shipped((tree) => {
      const pipeline = tree.pipeline as unknown as { data_analysis: { detector_class_name: string }[] };
      pipeline.data_analysis = pipeline.data_analysis.filter((d) => d.detector_class_name === 'DGADetector');
    });
    assert.deepEqual([...groundTruth(withoutDomainator, hosts).infected], [['10.0.0.2', 'necurs']]);
    assert.deepEqual(
      [...groundTruth(shipped(), hosts).infected],
      [
        ['10.0.0.2', 'necurs'],
        ['10.0.0.3', 'tunnel t.io'],
      ],
    );
  });
});

test('the syslog sink is a component when pipeline.alerting.syslog is set, and runs at least once', () => {
  assert.equal(pipelineComponents(shipped()).filter((c) => c.kind === 'syslog').length, 0);
  const config = shipped((tree) => {
    (tree.pipeline!.alerting as Record<string, unknown>).syslog = { host: '127.0.0.1' };
  });
  assert.deepEqual(selectComponent(config, 'syslog', undefined), { kind: 'syslog', name: 'syslog' });
  assert.ok(AT_LEAST_ONCE_KINDS.has('syslog'));
});
