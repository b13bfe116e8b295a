import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentAcls, renderAclCommands, stageAcls } from '../../../src/app/acl-plan.ts';
import { agentKafkaNames } from '../../../src/app/monitoring-agent.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { shippedConfigText } from '../config/helpers.ts';

const config = loadConfig({ text: shippedConfigText(), env: {} });
const stage = {
  name: 'my.stage',
  inputTopics: ['in'],
  outputTopics: ['out'],
  stores: { counts: {} },
  process: () => ({ outputs: [] }),
};

test('acl-plan grants what the worker touches: inputs, outputs, dead letters, changelog, attempts, group, transactional ids', () => {
  const lines = renderAclCommands(stageAcls(config, stage as never, 'User:alice'), 'k:9093').filter(
    (l) => !l.startsWith('#'),
  );
  const has = (tail: string) =>
    assert.ok(
      lines.some((l) => l.endsWith(tail) && l.includes('--allow-principal User:alice ')),
      `${tail} in\n${lines.join('\n')}`,
    );
  has('--operation Read --topic in');
  has('--operation Write --topic out');
  has('--operation Write --topic in.DLT');
  has('--operation Create --topic in.DLT');
  has('--operation Read --topic my.stage-counts-changelog');
  has('--operation Write --topic my.stage-counts-changelog');
  has('--operation Write --topic hamstring.delivery-attempts');
  has('--operation Read --group my.stage');
  has('--operation Describe --group my.stage- --resource-pattern-type prefixed');
  has('--operation Write --transactional-id my.stage- --resource-pattern-type prefixed');
  assert.ok(lines.every((l) => l.startsWith('kafka-acls.sh --bootstrap-server k:9093 ')));
  assert.equal(new Set(lines).size, lines.length);
});

test('acl-plan monitoring-agent grants the agent its monitoring topics, group and dead-letter topic, and no transactional id', () => {
  const lines = renderAclCommands(agentAcls('User:agent'), 'k:9093').filter((l) => !l.startsWith('#'));
  const names = agentKafkaNames();
  const has = (tail: string) =>
    assert.ok(
      lines.some((l) => l.endsWith(tail) && l.includes('--allow-principal User:agent ')),
      `${tail} in\n${lines.join('\n')}`,
    );
  for (const topic of names.inputs) has(`--operation Read --topic ${topic}`);
  assert.ok(names.inputs.includes('clickhouse_alerts'), names.inputs.join(' '));
  has('--operation Write --topic clickhouse_dlt');
  has('--operation Read --group monitoring.agent');
  assert.ok(!lines.some((l) => l.includes('--transactional-id')), 'at-least-once: no transactional id');
  assert.ok(
    !lines.some((l) => /--operation Create|--operation Write --topic clickhouse_(?!dlt)/.test(l)),
    'it only reads the monitoring topics and creates none',
  );
});

test('the agent ACLs follow its options: another group and topic prefix', () => {
  const lines = renderAclCommands(
    agentAcls('User:agent', { groupId: 'mon.b', topicPrefix: 'b_' }),
    'k:9093',
  ).join('\n');
  assert.match(lines, /--operation Read --group mon\.b$/m);
  assert.match(lines, /--operation Read --topic b_alerts$/m);
  assert.match(lines, /--operation Write --topic b_dlt$/m);
  assert.doesNotMatch(lines, /clickhouse_/);
});
