import type { HamstringConfig } from '../config/index.ts';
import type { Stage } from '../runtime/index.ts';
import { retryTopicsOf } from '../runtime/record-errors/retry-topics.ts';
import { changelogTopic } from '../runtime/state/changelog-topics.ts';
import { agentKafkaNames, type MonitoringAgentOptions } from './monitoring-agent.ts';
import { recordErrorPolicyFromConfig } from './worker-config.ts';

/**
 * The ACLs a stage's exactly-once worker needs on a cluster with an authorizer, derived from the
 * same functions the worker uses for its names (record error policy, retry and changelog topics,
 * group and transactional id), so that the plan cannot drift from what the worker touches:
 * - its inputs and retry topics: READ (which implies DESCRIBE);
 * - its outputs, dead-letter and retry topics, changelogs and the delivery-attempt topic: WRITE;
 *   changelogs and the attempt topic are read back too (restore, attempt counts): READ;
 * - topics the worker creates when missing (dead-letter, retry, changelog, attempt topic with
 *   `record_errors.create_topics`): CREATE;
 * - its consumer group: READ (join, commit offsets inside the transaction);
 * - the groups of its readers that only assign (changelog restore, delivery attempts), named
 *   `<stage>-<instance>-...`: DESCRIBE, as a prefix. The client needs a group id even for assign()
 *   and looks up that group's coordinator, which the broker answers only with DESCRIBE on it;
 * - its transactional ids `<stage>-<instance>`: WRITE, as a prefix, so every instance is covered.
 * IDEMPOTENT_WRITE on the cluster is implied by WRITE on a topic since Kafka 3.0 (KIP-679).
 */

export type AclResource = 'topic' | 'group' | 'transactional-id';
export type AclOperation = 'Read' | 'Write' | 'Create' | 'Describe';

export interface AclEntry {
  principal: string;
  resource: AclResource;
  name: string;
  prefixed: boolean;
  operation: AclOperation;
  /** Which stage needs it and why (a comment of the printed plan). */
  why: string;
}

export function stageAcls(config: HamstringConfig, stage: Stage, principal: string): AclEntry[] {
  const re = config.environment.record_errors;
  const policy = recordErrorPolicyFromConfig(config, stage);
  const groupId = stage.name;
  const entries: AclEntry[] = [];
  const add = (resource: AclResource, name: string, operation: AclOperation, why: string, prefixed = false) =>
    entries.push({ principal, resource, name, prefixed, operation, why: `${stage.name}: ${why}` });
  const retries = policy.retryTopics ? retryTopicsOf(stage.inputTopics, policy.retryTopics) : [];
  for (const t of [...stage.inputTopics, ...retries]) add('topic', t, 'Read', 'input');
  const outputs = stage.outputTopics === 'any' ? [] : stage.outputTopics;
  for (const t of outputs) add('topic', t, 'Write', 'output');
  const created: string[] = [...retries];
  if (policy.deadLetters !== false) {
    for (const t of new Set(stage.inputTopics.map((i) => policy.deadLetterTopic(i)))) {
      add('topic', t, 'Write', 'dead letters');
      created.push(t);
    }
  }
  for (const t of retries) add('topic', t, 'Write', 'retry hop');
  for (const store of Object.keys(stage.stores ?? {})) {
    const t = changelogTopic(groupId, store);
    add('topic', t, 'Read', `changelog of store ${store} (restore)`);
    add('topic', t, 'Write', `changelog of store ${store}`);
    created.push(t);
  }
  if (re.track_delivery_attempts) {
    const t = re.delivery_attempts_topic;
    add('topic', t, 'Read', 'delivery attempts');
    add('topic', t, 'Write', 'delivery attempts');
    created.push(t);
  }
  if (re.create_topics) for (const t of new Set(created)) add('topic', t, 'Create', 'created when missing');
  add('group', groupId, 'Read', 'consumer group');
  add('group', `${stage.name}-`, 'Describe', 'groups of its assign-only readers (restore, attempts)', true);
  add('transactional-id', `${stage.name}-`, 'Write', 'transactional ids of its instances', true);
  return entries;
}

/**
 * The ACLs of the monitoring agent (an at-least-once worker: no transactional id): READ on the
 * monitoring topics it copies into ClickHouse and on its group; WRITE on its dead-letter topic for
 * rows ClickHouse refuses. It creates no topic: its dead-letter topic is one of its declared
 * outputs, which must exist, and `hamstring up` (or the operator) creates it with the monitoring
 * topics (monitoring/topics.ts).
 */
export function agentAcls(
  principal: string,
  o: Pick<MonitoringAgentOptions, 'groupId' | 'topicPrefix' | 'deadLetterTopic'> = {},
): AclEntry[] {
  const names = agentKafkaNames(o);
  const entries: AclEntry[] = [];
  const add = (resource: AclResource, name: string, operation: AclOperation, why: string) =>
    entries.push({ principal, resource, name, prefixed: false, operation, why: `monitoring agent: ${why}` });
  for (const t of names.inputs) add('topic', t, 'Read', 'monitoring rows to copy');
  add('topic', names.deadLetterTopic, 'Write', 'rows ClickHouse refuses');
  add('group', names.groupId, 'Read', 'consumer group');
  return entries;
}

const FLAG: Readonly<Record<AclResource, string>> = {
  topic: '--topic',
  group: '--group',
  'transactional-id': '--transactional-id',
};

/** One `kafka-acls.sh` command per entry (duplicates across stages once), each after its reason. */
export function renderAclCommands(entries: readonly AclEntry[], bootstrap: string): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of entries) {
    const command =
      `kafka-acls.sh --bootstrap-server ${bootstrap} --command-config admin.properties --add ` +
      `--allow-principal ${e.principal} --operation ${e.operation} ${FLAG[e.resource]} ${e.name}` +
      (e.prefixed ? ' --resource-pattern-type prefixed' : '');
    if (seen.has(command)) continue;
    seen.add(command);
    lines.push(`# ${e.why}`, command);
  }
  return lines;
}
