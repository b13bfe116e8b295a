import type { AdminPort, TopicSpec } from '../kafka/admin.ts';
import { systemClock, type Clock } from './clock.ts';
import { hiddenTopicsHint } from '../kafka/security.ts';

/** What a worker writes to besides its inputs, checked or created before the first transaction. */
export interface TopicPlan {
  stage: string;
  inputs: readonly string[];
  /** Declared output topics; `any` cannot be checked ahead. */
  outputs: readonly string[] | 'any';
  /** The dead-letter topic of each input (several inputs may share one); none when dead letters are off. */
  deadLetterTopic?: (input: string) => string;
  /** Create missing dead-letter topics (with their input's partition count) or only check them. */
  create: boolean;
  /** Replication of created topics; -1: the broker's default.replication.factor. */
  replicationFactor: number;
  bootstrapServers: string;
  /** A topic created moments ago may not be in every broker's metadata yet. Default 10 s. */
  graceMs?: number;
  clock?: Clock;
}

/** Partition counts of `topics`, asked again while one is not in the metadata yet (within the grace). */
async function partitionCounts(
  admin: AdminPort,
  topics: readonly string[],
  plan: TopicPlan,
): Promise<Map<string, number>> {
  const clock = plan.clock ?? systemClock;
  const deadline = clock.now() + (plan.graceMs ?? 10_000);
  for (;;) {
    const counts = await admin.partitionCounts(topics);
    if (topics.every((t) => counts.has(t)) || clock.now() >= deadline) return counts;
    await clock.sleep(500);
  }
}

/** Names of `topics` missing from the cluster, asked again until none is missing or the grace ends. */
async function missingTopics(
  admin: AdminPort,
  topics: readonly string[],
  plan: TopicPlan,
): Promise<string[]> {
  const clock = plan.clock ?? systemClock;
  const deadline = clock.now() + (plan.graceMs ?? 10_000);
  for (;;) {
    const known = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !known.has(t));
    if (missing.length === 0 || clock.now() >= deadline) return missing;
    await clock.sleep(500);
  }
}

/**
 * Makes sure every topic a worker will produce to exists before it is needed: librdkafka holds
 * records for an unknown topic until message.timeout.ms, so a missing output or dead-letter topic
 * otherwise surfaces as commit timeouts forever, without its name. A missing declared output is a
 * configuration error; missing dead-letter topics are created like the retry topics (one partition
 * count per input, the largest when inputs share a DLT), or reported when the runtime may not
 * create topics. Returns the configuration error, or undefined when every topic is there.
 */
export async function prepareOutputTopics(admin: AdminPort, plan: TopicPlan): Promise<string | undefined> {
  const outputs = plan.outputs === 'any' ? [] : await missingTopics(admin, plan.outputs, plan);
  if (outputs.length > 0) {
    return (
      `configuration error: output topic(s) ${outputs.join(', ')} of stage ${plan.stage} do not exist on ` +
      `${plan.bootstrapServers}; create them or fix the stage's output topics` +
      hiddenTopicsHint(outputs, 'WRITE')
    );
  }
  if (!plan.deadLetterTopic) return undefined;
  const dltOf = plan.deadLetterTopic;
  // No grace here: a dead-letter topic that is missing is created (an existing one is left alone).
  const known = new Set(await admin.listTopics());
  const wanted = new Map<string, string[]>();
  for (const input of plan.inputs) {
    const dlt = dltOf(input);
    if (!known.has(dlt)) wanted.set(dlt, [...(wanted.get(dlt) ?? []), input]);
  }
  if (wanted.size === 0) return undefined;
  if (!plan.create) {
    return (
      `configuration error: dead-letter topic(s) ${[...wanted.keys()].join(', ')} of stage ${plan.stage} ` +
      `do not exist on ${plan.bootstrapServers} and record_errors.create_topics is false; create them`
    );
  }
  const counts = await partitionCounts(admin, plan.inputs, plan);
  const specs: TopicSpec[] = [...wanted].map(([topic, inputs]) => ({
    topic,
    partitions: Math.max(1, ...inputs.map((i) => counts.get(i) ?? 1)),
    replicationFactor: plan.replicationFactor,
  }));
  await admin.createTopics(specs);
  return undefined;
}
