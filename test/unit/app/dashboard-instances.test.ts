import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instancesView, stageGroupsOf } from '../../../src/app/dashboard/stage-instances.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { shippedConfigText } from '../config/helpers.ts';

test("the shipped config's stages and groups: a kind's only component keeps the kind's full name, two get their own", () => {
  const groups = stageGroupsOf(loadConfig({ text: shippedConfigText(), env: {} }));
  assert.deepEqual(groups, [
    { label: 'logserver', group: 'log_storage.logserver' },
    { label: 'collector dga_collector', group: 'log_collection.collector' },
    { label: 'prefilter dga_prefilter', group: 'log_filtering.prefilter-dga_prefilter' },
    { label: 'prefilter tunnel_prefilter', group: 'log_filtering.prefilter-tunnel_prefilter' },
    { label: 'inspector dga_inspector', group: 'data_inspection.inspector-dga_inspector' },
    { label: 'inspector tunnel_inspector', group: 'data_inspection.inspector-tunnel_inspector' },
    { label: 'detector dga_detector', group: 'data_analysis.detector-dga_detector' },
    { label: 'detector domainator', group: 'data_analysis.detector-domainator' },
    { label: 'alerter generic', group: 'data_alerting.alerter' },
  ]);
});

test('members are grouped by machine, machines and partitions in natural order; a joining member has none', () => {
  const view = instancesView(
    { label: 'collector dga_collector', group: 'g' },
    {
      groupId: 'g',
      state: 'Stable',
      members: [
        { memberId: 'm3', clientId: 'c-b', host: '10.0.0.10', partitions: [] },
        {
          memberId: 'm1',
          clientId: 'c-a',
          host: '10.0.0.2',
          partitions: [
            { topic: 't', partition: 10 },
            { topic: 't', partition: 2 },
          ],
        },
        { memberId: 'm2', clientId: 'c-c', host: '10.0.0.10', partitions: [{ topic: 't', partition: 0 }] },
      ],
    },
  );
  assert.deepEqual(view, {
    stage: 'collector dga_collector',
    group: 'g',
    state: 'Stable',
    machines: [
      { host: '10.0.0.2', instances: [{ instance: 'c-a', partitions: ['t:2', 't:10'] }] },
      {
        host: '10.0.0.10',
        instances: [
          { instance: 'c-b', partitions: [] },
          { instance: 'c-c', partitions: ['t:0'] },
        ],
      },
    ],
  });
});
