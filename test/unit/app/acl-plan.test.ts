import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderAclCommands, stageAcls } from '../../../src/app/acl-plan.ts';
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
  has('--operation Write --transactional-id my.stage- --resource-pattern-type prefixed');
  assert.ok(lines.every((l) => l.startsWith('kafka-acls.sh --bootstrap-server k:9093 ')));
  assert.equal(new Set(lines).size, lines.length);
});
