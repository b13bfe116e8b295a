import { bootstrapServers, type HamstringConfig } from '../config/index.ts';
import { createAdmin } from '../kafka/admin.ts';
import { KafkaError } from '../kafka/kafka-error.ts';
import { exponentialBackOff, type Stage } from '../runtime/index.ts';
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
 * Retries of the topic creation while Kafka cannot be asked: a stage process started (or restarted
 * by its supervisor) during a broker outage waits for the broker instead of exiting at once.
 */
/** One attempt: a reachable cluster creates topics in well under a second. */
const CREATE_TIMEOUT_MS = 10_000;
const UNREACHABLE_BACKOFF = exponentialBackOff({
  initialMs: 1_000,
  multiplier: 2,
  maxIntervalMs: 15_000,
  maxElapsedMs: 300_000,
});

/**
 * Creates the missing topics of the stages (existing ones are left as they are). A worker treats a
 * missing input topic as a configuration error, so this is an explicit step (`hamstring run
 * --create-topics`), never implied. While Kafka cannot be reached (a transport or retriable error)
 * it tries again, up to 5 minutes, telling `onWait` each time; any other error is thrown at once.
 */
export async function createStageTopics(
  config: HamstringConfig,
  stages: readonly Stage[],
  o: {
    partitions: number;
    replicationFactor?: number;
    onWait?: (err: KafkaError, delayMs: number) => void;
  },
): Promise<string[]> {
  const topics = stageTopics(config, stages);
  const admin = createAdmin(bootstrapServers(config), 'hamstring-run-admin');
  const began = Date.now();
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await admin.createTopics(
          topics.map((topic) => ({
            topic,
            partitions: o.partitions,
            replicationFactor: o.replicationFactor ?? -1,
          })),
          CREATE_TIMEOUT_MS,
        );
        return topics;
      } catch (e) {
        const transient = e instanceof KafkaError && (e.kind === 'transport' || e.kind === 'retriable');
        const delay = transient ? UNREACHABLE_BACKOFF(attempt, Date.now() - began) : undefined;
        if (delay === undefined || !(e instanceof KafkaError)) throw e;
        o.onWait?.(e, delay);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  } finally {
    admin.close();
  }
}
