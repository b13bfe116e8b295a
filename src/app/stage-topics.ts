import { bootstrapServers, type HamstringConfig } from '../config/index.ts';
import { createAdmin } from '../kafka/admin.ts';
import type { Stage } from '../runtime/index.ts';
import { recordErrorPolicyFromConfig } from './worker-config.ts';

/**
 * Every topic the stages read or write: inputs, declared outputs and the dead-letter topic of each
 * input (by the stage's record error settings). Retry topics are left to the worker, which mirrors
 * their input's partition count.
 */
export function stageTopics(config: HamstringConfig, stages: readonly Stage[]): string[] {
  const topics = stages.flatMap((stage) => {
    const policy = recordErrorPolicyFromConfig(config, stage);
    return [
      ...stage.inputTopics,
      ...(stage.outputTopics === 'any' ? [] : stage.outputTopics),
      ...stage.inputTopics.map((t) => policy.deadLetterTopic(t)),
    ];
  });
  return [...new Set(topics)];
}

/**
 * Creates the missing topics of the stages (existing ones are left as they are). A worker treats a
 * missing input topic as a configuration error, so this is an explicit step (`hamstring run
 * --create-topics`), never implied.
 */
export async function createStageTopics(
  config: HamstringConfig,
  stages: readonly Stage[],
  o: { partitions: number; replicationFactor?: number },
): Promise<string[]> {
  const topics = stageTopics(config, stages);
  const admin = createAdmin(bootstrapServers(config), 'hamstring-run-admin');
  try {
    await admin.createTopics(
      topics.map((topic) => ({
        topic,
        partitions: o.partitions,
        replicationFactor: o.replicationFactor ?? -1,
      })),
    );
  } finally {
    admin.close();
  }
  return topics;
}
